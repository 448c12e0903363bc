// The single-stack decoder shared by llama (and Mistral), qwen2, qwen3, phi3, smollm3, gemma2,
// gemma3 and afm-device: pre-RMSNorm blocks of grouped-query attention and a gated
// feed-forward (model/decoder_layer.h); tied or separate output head. Architecture files
// differ only in DenseOptions. `{arch}.attention.sliding_window`
// (optional, Mistral v0.1's HF conversions) gives every layer sliding-window attention: the
// query at p sees p - W + 1 .. p (the cache stays full length, so rollback and prefix reuse
// work as for full attention).
//
// KV sharing (afm-device): layers 0 .. B1-1 own K/V; layers B1 .. n-1 have no K/V projections
// and attend to layer B1-1's cache. Since no later layer writes K/V, positions whose logits
// are not wanted stop after layer B1-1 (prefill runs Block 2 for the last position only).
#pragma once

#include <memory>
#include <vector>

#include "model/decoder_layer.h"
#include "model/model.h"
#include "ops/activation.h"
#include "ops/matrix.h"
#include "ops/rope.h"

namespace afm::model {

struct DenseOptions {
  ops::RopeLayout rope_layout = ops::RopeLayout::kAdjacent;
  QkNorm qk_norm = QkNorm::kNone;  // attn_q_norm / attn_k_norm are required unless kNone
  bool kv_share = false;           // {arch}.kv_share.block1_layers splits the stack
  // phi3: q, k and v in one attn_qkv tensor (rows q | k | v) and the gate and up projections
  // in one ffn_up (rows gate | up), as llama.cpp stores them; viewed as separate matrices.
  bool fused_projections = false;
  // smollm3: every nope_every-th layer (layers i with (i + 1) % nope_every == 0) has no
  // positional embedding (NoPE); 0: RoPE in every layer.
  int64_t nope_every = 0;
  // Gemma: token embeddings x sqrt(n_embd), a post-norm after each block
  // (blk.N.post_attention_norm / post_ffw_norm), a GeGLU feed-forward.
  bool scale_embeddings = false;
  bool sandwich_norms = false;
  ops::FfnActivation activation = ops::FfnActivation::kSilu;
  // > 0: the sliding window covers the layers i with (i + 1) % swa_pattern != 0 and the
  // others see the whole context (Gemma 2: 2, Gemma 3: 6); 0: the window covers every layer.
  int64_t swa_pattern = 0;
  // > 0: the RoPE base of the sliding-window layers, unscaled (Gemma 3: 10000); the others keep
  // {arch}.rope.freq_base and its scaling. 0: one RoPE for every layer.
  float rope_local_base = 0;
  // The q·k scale when the file has no {arch}.attention.scale (0: 1 / sqrt(head_dim)).
  float attention_scale = 0;
  // The window when the file has no {arch}.attention.sliding_window (Gemma 2: 4096).
  int64_t default_window = 0;
};

class DenseDecoder : public Model {
 public:
  // Reads hparams for `file`'s architecture and views every weight; Error on any mismatch.
  DenseDecoder(std::shared_ptr<const gguf::File> file, const DenseOptions& options);

  std::unique_ptr<SequenceState> new_state(const StateOptions& options) const override;
  void forward(SequenceState& state, std::span<const int32_t> tokens, LogitRows rows,
               float* logits, Workers& pool) const override;
  std::unique_ptr<BatchWorkspace> new_batch_workspace(const BatchOptions& options) const override;
  void forward_batch(std::span<const BatchItem> items, BatchWorkspace& workspace,
                     Workers& pool) const override;
  std::string describe() const override;
  ModelLayout layout() const override;

  int64_t kv_layers() const { return block1_layers_; }

 private:
  struct Layer {
    AttentionWeights attn;
    FfnWeights ffn;
    int64_t kv_layer;  // the cache layer it writes (if it has K/V) and reads
  };
  class State;
  struct Buffers;
  class Workspace;

  Layer load_layer(const class WeightLoader& w, int64_t index) const;
  // The forward pass of `items` on buffers `a` (a single state's own, or a batch workspace's).
  void run(std::span<const BatchItem> items, Buffers& a, Workers& pool) const;
  // Past Block 1 of a KV-sharing model, keeps only the rows whose logits are wanted.
  int64_t keep_logit_rows(std::span<const BatchItem> items, Buffers& a) const;
  void write_logits(std::span<const BatchItem> items, int64_t rows, Buffers& a,
                    Workers& pool) const;
  void attach_lora(State& s, const LoraAdapter& adapter, float scale, int threads) const;
  // fused_projections: l's q/k/v and gate/up targets cut from the adapter's attn_qkv / ffn_up.
  void split_fused_lora(State& s, const LoraAdapter& adapter, float scale,
                        const std::string& prefix, struct LayerLora& l) const;
  // Error(kFormat) when a target's pair does not fit its projection's input and output widths.
  void check_lora_shapes(const struct LayerLora& l, const std::string& prefix) const;
  AttentionConfig attention_config() const;
  // Layer i's: its window (swa_pattern), RoPE (NoPE, rope_local_base).
  AttentionConfig layer_attention_config(const AttentionConfig& base, int64_t i) const;
  bool is_local_layer(int64_t i) const;

  DenseOptions options_;
  int64_t block1_layers_;  // layers that own K/V (all of them unless kv_share)
  int64_t window_;         // sliding-window width (0: full causal); swa_pattern picks the layers
  float attention_scale_;  // {arch}.attention.scale, else the options' (0: 1 / sqrt(head_dim))
  float attn_softcap_;     // {arch}.attn_logit_softcapping (0: none)
  float final_softcap_;    // {arch}.final_logit_softcapping (0: none)
  ops::Rope rope_;
  ops::Rope rope_local_;  // the sliding-window layers' RoPE (rope_local_base > 0)
  ops::Matrix token_embd_, output_;
  std::vector<float> output_norm_;
  std::vector<Layer> layers_;
};

// Loader for the registry: `file` must name an architecture whose keys use `options`.
std::unique_ptr<Model> load_dense_decoder(std::shared_ptr<const gguf::File> file,
                                          const DenseOptions& options);

}  // namespace afm::model
