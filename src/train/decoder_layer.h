// One pre-norm decoder layer's pieces for the training models: attention with optional RoPE,
// QK RMSNorm after RoPE, a window, and K/V that may come from another layer (afm-device
// Block 2); the dense SwiGLU feed-forward. Semantics as docs/gguf.md states them.
#pragma once

#include <string>

#include <torch/torch.h>

#include "train/lora_weight.h"
#include "train/torch_ops.h"

namespace afm::train {

struct AttentionParams {
  torch::Tensor norm;
  Weight wq, wk, wv, wo;         // wk, wv undefined: the layer reuses another's K/V
  torch::Tensor q_norm, k_norm;  // undefined: no QK norm
};

struct FfnParams {
  torch::Tensor norm;
  Weight gate, up, down;
};

struct AttentionSpec {
  int64_t n_head = 0, n_head_kv = 0, head_dim = 0;
  const RopeTable* rope = nullptr;  // nullptr: no positional embedding (NoPE)
  double qk_norm_eps = 1e-5;
  int64_t window = 0;  // 0: full causal
  torch::Tensor same_segment;  // packed rows: same_segment_mask(); undefined: one document
};

struct KeyValues {
  torch::Tensor k, v;  // (B, G, T, D), K after RoPE and k-norm
};

// K and V of normed input xn (B, T, d).
KeyValues project_key_values(const torch::Tensor& xn, const AttentionParams& p,
                             const AttentionSpec& s);

// The attention output (B, T, d) for normed input xn reading `kv`.
torch::Tensor attend(const torch::Tensor& xn, const AttentionParams& p, const AttentionSpec& s,
                     const KeyValues& kv);

}  // namespace afm::train
