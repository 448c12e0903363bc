// Applying a LoRA adapter unmerged inside a forward pass: y += s · (x · Aᵀ) · Bᵀ after the base
// product y = x · Wᵀ (model/lora.h for the layout). The base weights are never copied or
// modified, so sequences on different adapters (or none) share one base model in memory.
//
// The two small products run through the ordinary matmul kernels (batched over the tokens of
// the call: (T, in) x (in, rank), then (T, rank) x (rank, out)); lora_add_reference is the
// scalar oracle they are tested against.
//
// Thread safety: LoraScratch belongs to one sequence (one track of afm-server) and is sized
// before the forward pass (a ThreadTeam never resizes it). Kernels never allocate.
#pragma once

#include <cstdint>
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

struct LoraScratch {
  std::vector<float> mid;    // (tokens, rank)
  std::vector<float> delta;  // (tokens, out) for a chunk of tokens
  ops::ActivationScratch act;
  // Sizes for batches of up to `tokens` of width <= max_in, ranks <= max_rank and outputs of
  // width <= max_out (wider outputs, e.g. a vocabulary-sized head, are done in token chunks).
  void reserve(int64_t tokens, int64_t max_in, int64_t max_rank, int64_t max_out);
};

// y (tokens, out) += t.scale · (x · Aₑᵀ) · Bₑᵀ for x (tokens, in); `slice` picks expert e of a
// stacked pair (0 otherwise). The scratch must have been reserved for these sizes.
void lora_add(const float* x, int64_t tokens, const LoraTarget& t, int64_t slice, float* y,
              LoraScratch& s, Workers& pool);

// Scalar reference (float64 accumulation over dequantised A and B): the oracle for lora_add.
void lora_add_reference(const float* x, int64_t tokens, const LoraTarget& t, int64_t slice,
                        float* y);

}  // namespace afm::model
