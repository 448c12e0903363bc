// The Llama-family decoder shared by the llama, qwen2 and qwen3 architectures:
// pre-RMSNorm blocks of grouped-query attention (optional q/k/v biases, optional per-head
// QK-RMSNorm before RoPE) and a SwiGLU feed-forward; tied or separate output head.
// Architecture files differ only in DenseOptions and how they read metadata.
#pragma once

#include <memory>
#include <vector>

#include "model/model.h"
#include "ops/matrix.h"
#include "ops/rope.h"

namespace afm::model {

struct DenseOptions {
  ops::RopeLayout rope_layout = ops::RopeLayout::kAdjacent;
  bool qk_norm = false;  // attn_q_norm / attn_k_norm are required when set
};

class DenseDecoder : public Model {
 public:
  // Reads hparams for `file`'s architecture and views every weight; Error on any mismatch.
  DenseDecoder(std::shared_ptr<const gguf::File> file, const DenseOptions& options);

  std::unique_ptr<SequenceState> new_state(const StateOptions& options) const override;
  void forward(SequenceState& state, std::span<const int32_t> tokens, LogitRows rows,
               float* logits, ThreadPool& pool) const override;
  std::string describe() const override;

 private:
  struct Layer {
    std::vector<float> attn_norm, ffn_norm, q_norm, k_norm, q_bias, k_bias, v_bias;
    ops::Matrix wq, wk, wv, wo, gate, up, down;
  };
  class State;

  void attention_block(State& s, const Layer& layer, int64_t index, int64_t tokens,
                       ThreadPool& pool) const;
  void ffn_block(State& s, const Layer& layer, int64_t tokens, ThreadPool& pool) const;

  DenseOptions options_;
  ops::Rope rope_;
  ops::Matrix token_embd_, output_;
  std::vector<float> output_norm_;
  std::vector<Layer> layers_;
};

// Loader for the registry: `file` must name an architecture whose keys use `options`.
std::unique_ptr<Model> load_dense_decoder(std::shared_ptr<const gguf::File> file,
                                          const DenseOptions& options);

}  // namespace afm::model
