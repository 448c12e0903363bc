// Applying a LoRA adapter unmerged inside a forward pass: y += s · (x · Aᵀ) · Bᵀ after the base
// product y = x · Wᵀ (model/lora.h for the layout). The base weights are never copied or
// modified, so sequences on different adapters (or none) share one base model in memory.
//
// Both products are batched over the tokens of the call: m = x · Aᵀ, (T, in) x (in, rank), runs
// through the matmul kernels; y += s · m · Bᵀ, (T, rank) x (rank, out), is rank vector axpys
// per token over Bᵀ (LoraPair::b_t), split by output columns and written in place.
// lora_add_reference (scalar, float64) is the oracle both paths are tested against.
//
// Thread safety: LoraScratch belongs to one sequence (one track of afm-server) and is sized
// before the forward pass (a ThreadTeam never resizes it). Kernels never allocate.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "model/lora.h"
#include "ops/matmul.h"

namespace afm::model {

// One adapted projection: the pair and its effective scale s.
struct LoraTarget {
  const LoraPair* pair = nullptr;
  float scale = 0;
  explicit operator bool() const { return pair != nullptr; }
};

struct AttentionLora {
  LoraTarget q, k, v, o;
};
struct FfnLora {
  LoraTarget gate, up, down;  // dense feed-forward
  LoraTarget router, gate_exps, up_exps, down_exps;  // mixture of experts (stacked pairs)
};
struct LayerLora {
  AttentionLora attn;
  FfnLora ffn;
};

// The targets of one layer whose tensors are named `prefix` + "attn_q.weight" etc.
LayerLora resolve_layer_lora(const LoraAdapter& adapter, float user_scale,
                             const std::string& prefix);
LoraTarget resolve_lora(const LoraAdapter& adapter, float user_scale, const std::string& name);

// Calls of at most this many tokens (decode) take the fused path of lora_add_group.
inline constexpr int64_t kLoraFusedTokens = 4;
// Targets one lora_add_group call can take (q, k, v).
inline constexpr int64_t kLoraMaxGroup = 3;

struct LoraScratch {
  std::vector<float> mid;  // (tokens, rank)
  ops::ActivationScratch act;
  std::vector<float> per_thread;  // fused path: each thread's x copy and low-rank activations
  int64_t per_thread_floats = 0;
  // Sizes for batches of up to `tokens` of width <= max_in and ranks <= max_rank, run by up to
  // `threads` workers (any output width: outputs are updated in place).
  void reserve(int64_t tokens, int64_t max_in, int64_t max_rank, int threads);
};

// One output of lora_add_group: y (tokens, out) += the target's update (slice: expert).
struct LoraOutput {
  const LoraTarget* target;
  int64_t slice;
  float* y;
};

// y (tokens, out) += t.scale · (x · Aₑᵀ) · Bₑᵀ for x (tokens, in); `slice` picks expert e of a
// stacked pair (0 otherwise). The scratch must have been reserved for these sizes.
void lora_add(const float* x, int64_t tokens, const LoraTarget& t, int64_t slice, float* y,
              LoraScratch& s, Workers& pool);

// Several targets over the same input x (tokens, in) (q, k, v or gate, up); targets that are
// not adapted are skipped. Decode-sized calls (tokens <= kLoraFusedTokens) with f32 / f16 pairs
// run in one parallel region: every worker computes the small x · Aᵀ products itself (no
// barrier), then its share of the output rows; f16 pairs see f16-rounded inputs as in the
// kernel path. Larger calls, or other types, run lora_add per target.
void lora_add_group(const float* x, int64_t tokens, std::initializer_list<LoraOutput> outputs,
                    LoraScratch& s, Workers& pool);

// Scalar reference (float64 accumulation over dequantised A and B): the oracle for lora_add.
void lora_add_reference(const float* x, int64_t tokens, const LoraTarget& t, int64_t slice,
                        float* y);

}  // namespace afm::model
