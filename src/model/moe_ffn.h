// Mixture-of-experts feed-forward (afm-server's MoE layers): a softmax router over E experts,
// the top-k per token (weights renormalised over the k chosen), no capacity limit (no token is
// ever dropped). Tokens are grouped by expert (counting sort) and every active expert runs one
// batched SwiGLU over its tokens: grouped matrix multiplies instead of per-token ones.
//
// Runs through Workers like decoder_layer.h, so it works on a ThreadTeam.
#pragma once

#include <cstdint>
#include <vector>

#include "model/decoder_layer.h"

namespace afm::model {

struct MoeWeights {
  std::vector<float> norm;
  ops::Matrix router;                   // (E, n_embd)
  ops::Matrix gate_exps, up_exps;       // (E * n_ff_exp, n_embd): expert e is slice e
  ops::Matrix down_exps;                // (E * n_embd, n_ff_exp)
  int64_t n_expert = 0, n_used = 0, n_ff_exp = 0;
};

// Routing and grouping buffers for up to n_batch tokens.
struct MoeScratch {
  MoeScratch(int64_t n_batch, int64_t n_embd, int64_t n_expert, int64_t n_used);
  std::vector<float> router_logits;    // (n_batch, E)
  std::vector<int32_t> choice;         // (n_batch, k) expert ids
  std::vector<float> weight;           // (n_batch, k)
  std::vector<int32_t> expert_begin;   // (E + 1) offsets into `slots`
  std::vector<int32_t> slots;          // (n_batch * k) token-major index t * k + j, by expert
  std::vector<float> gathered, expert_out, sum;  // (n_batch, n_embd) each
};

// Routes each token: choice[t, :] are the top-k experts by softmax probability (ties: lower
// index), weight[t, :] their probabilities renormalised to sum 1. logits: (tokens, E).
void route_tokens(const float* logits, int64_t tokens, int64_t n_expert, int64_t n_used,
                  int32_t* choice, float* weight);

// x: (tokens, n_embd) += MoE(RMSNorm(x)). `lora` (null: none) adapts the router and, per
// expert, slice e of stacked gate/up/down pairs, with `lora_scratch` (null: s.lora).
void moe_block(const MoeWeights& w, int64_t n_embd, float eps, TokenSpan span, float* x,
               LayerScratch& s, MoeScratch& m, Workers& pool, const FfnLora* lora = nullptr,
               LoraScratch* lora_scratch = nullptr);

}  // namespace afm::model
