// afm-server: the Parallel-Track Mixture-of-Experts decoder (tech report 2.2; semantics in
// docs/gguf.md). T tracks of L layers, grouped in track blocks of D layers. Every track starts
// a block from the same state; tracks never exchange data inside a block, so they run
// concurrently, each on its own team of threads; at the block boundary their outputs are
// averaged. Attention repeats local (sliding window, RoPE, ring-buffer cache) and global (full
// causal, NoPE) layers; every moe_every-th feed-forward is a mixture of experts.
#pragma once

#include <memory>
#include <vector>

#include "model/decoder_layer.h"
#include "model/model.h"
#include "model/moe_ffn.h"
#include "ops/rope.h"

namespace afm::model {

struct PtMoeParams {
  int64_t tracks = 1, block_depth = 1;
  int64_t n_expert = 0, n_expert_used = 0, n_ff_exp = 0;
  int64_t moe_every = 2, global_every = 4, sliding_window = 4096;
};

class PtMoeDecoder : public Model {
 public:
  explicit PtMoeDecoder(std::shared_ptr<const gguf::File> file);

  std::unique_ptr<SequenceState> new_state(const StateOptions& options) const override;
  void forward(SequenceState& state, std::span<const int32_t> tokens, LogitRows rows,
               float* logits, Workers& pool) const override;
  std::unique_ptr<BatchWorkspace> new_batch_workspace(const BatchOptions& options) const override;
  void forward_batch(std::span<const BatchItem> items, BatchWorkspace& workspace,
                     Workers& pool) const override;
  std::string describe() const override;
  ModelLayout layout() const override;

  const PtMoeParams& params() const { return pt_; }
  bool is_global(int64_t layer) const { return (layer + 1) % pt_.global_every == 0; }
  bool is_moe(int64_t layer) const {
    return pt_.n_expert > 0 && (layer + 1) % pt_.moe_every == 0;
  }
  // Cache positions a layer keeps for a context of n_ctx and batches of n_batch tokens.
  int64_t cache_capacity(int64_t layer, int64_t n_ctx, int64_t n_batch) const;

 private:
  struct Layer {
    AttentionWeights attn;
    FfnWeights ffn;  // dense layers
    MoeWeights moe;  // MoE layers
  };
  class State;
  class TrackState;
  struct Buffers;
  class Workspace;

  Layer load_layer(const class WeightLoader& w, int64_t track, int64_t layer) const;
  AttentionConfig attention_config(int64_t layer) const;
  void attach_lora(State& s, const LoraAdapter& adapter, float scale, int threads) const;
  // The forward pass of `items` on buffers `a` (a single state's own, or a batch workspace's).
  void run(std::span<const BatchItem> items, Buffers& a, Workers& pool) const;
  void run_track_block(std::span<const BatchItem> items, Buffers& a, int64_t track,
                       int64_t block, Workers& w) const;
  void run_block(std::span<const BatchItem> items, Buffers& a, int64_t block, bool sequential,
                 Workers& pool) const;
  void write_logits(std::span<const BatchItem> items, Buffers& a, Workers& pool) const;

  PtMoeParams pt_;
  ops::Rope rope_;
  ops::Matrix token_embd_;
  std::vector<float> output_norm_;
  std::vector<Layer> layers_;  // track-major: layers_[t * L + n]
};

}  // namespace afm::model
