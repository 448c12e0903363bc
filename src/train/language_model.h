// The training-side models: one torch::nn::Module per architecture family, all behind
// LanguageModel. Each parameter is registered under its GGUF tensor name (docs/gguf.md), in
// the runtime's orientation (rows = outputs), so export is a rename-free copy.
//
// Contract: forward() takes token ids (B, T) int64 on the model's device and returns logits
// (B, T, vocab) in float32; positions are 0 .. T-1, or with `packing` (torch_ops.h) each
// packed document's own, attention kept inside documents. aux_loss() is the load-balancing loss of
// the last forward (a zero scalar for models without experts). Not thread-safe.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "train/decoder_layer.h"
#include "train/model_config.h"

namespace afm::train {

struct NamedParameter {
  std::string gguf_name;
  torch::Tensor tensor;
  bool decay;  // AdamW weight decay applies (matrices and embeddings, not norms)
};

class LanguageModel : public torch::nn::Module {
 public:
  explicit LanguageModel(ModelConfig config) : config_(std::move(config)) {}

  virtual torch::Tensor forward(const torch::Tensor& tokens, const Packing& packing = {}) = 0;
  virtual torch::Tensor aux_loss() const;

  const ModelConfig& config() const { return config_; }
  const std::vector<NamedParameter>& gguf_parameters() const { return params_; }

 protected:
  // Registers a trainable tensor under `gguf_name` ('.' becomes '_' in torch's own name).
  torch::Tensor add(const std::string& gguf_name, torch::Tensor init, bool decay);
  torch::Tensor normal(std::vector<int64_t> shape, double std) const;
  torch::Tensor ones(std::vector<int64_t> shape) const;

  // x (B, T) ids -> (B, T, d) rows of the tied embedding; final norm and tied head.
  torch::Tensor embed(const torch::Tensor& tokens) const;
  torch::Tensor head(const torch::Tensor& x) const;
  void add_embedding_and_output_norm();
  // `prefix` is the GGUF layer prefix ("blk.3." or "trk.1.blk.3.").
  AttentionParams add_attention(const std::string& prefix, bool with_kv, bool qk_norm);
  FfnParams add_ffn(const std::string& prefix);
  double residual_std() const;  // init std of output projections
  // `packing`: the mask of packed rows is set on the spec (undefined tensors when not packed).
  AttentionSpec attention_spec(const RopeTable* rope, int64_t window,
                               const torch::Tensor& same_segment = {}) const;

  ModelConfig config_;
  std::vector<NamedParameter> params_;
  torch::Tensor token_embd_, output_norm_;
};

// Builds the model for config.arch with seeded random initialisation (normal 0.02; residual
// output projections scaled by 1/sqrt(2 x layers), norms 1).
std::shared_ptr<LanguageModel> make_language_model(const ModelConfig& config, uint64_t seed);

}  // namespace afm::train
