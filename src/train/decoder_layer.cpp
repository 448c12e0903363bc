#include "train/decoder_layer.h"

namespace afm::train {
namespace {

// (B, T, heads * D) -> (B, heads, T, D)
torch::Tensor split_heads(const torch::Tensor& x, int64_t heads, int64_t head_dim) {
  return x.reshape({x.size(0), x.size(1), heads, head_dim}).transpose(1, 2);
}

// RoPE (when the layer has it), then the QK norm (when it has one).
torch::Tensor position_and_norm(torch::Tensor x, const torch::Tensor& norm,
                                const AttentionSpec& s) {
  if (s.rope != nullptr) x = rope_pairs(x, *s.rope);
  if (norm.defined()) x = rms_normalize(x, norm, s.qk_norm_eps);
  return x;
}

}  // namespace

KeyValues project_key_values(const torch::Tensor& xn, const AttentionParams& p,
                             const AttentionSpec& s) {
  torch::Tensor k = split_heads(p.wk(xn), s.n_head_kv, s.head_dim);
  torch::Tensor v = split_heads(p.wv(xn), s.n_head_kv, s.head_dim);
  return {position_and_norm(k, p.k_norm, s), v};
}

torch::Tensor attend(const torch::Tensor& xn, const AttentionParams& p, const AttentionSpec& s,
                     const KeyValues& kv) {
  torch::Tensor q = position_and_norm(split_heads(p.wq(xn), s.n_head, s.head_dim),
                                      p.q_norm, s);
  torch::Tensor out = causal_attention(q, kv.k, kv.v, s.window, s.same_segment);  // (B, H, T, D)
  out = out.transpose(1, 2).reshape({xn.size(0), xn.size(1), s.n_head * s.head_dim});
  return p.wo(out);
}

}  // namespace afm::train
