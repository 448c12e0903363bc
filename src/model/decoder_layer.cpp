#include "model/decoder_layer.h"

#include <algorithm>
#include <cmath>

#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/norm.h"

namespace afm::model {
namespace {

void add_bias(float* x, const std::vector<float>& bias, int64_t rows, Workers& pool) {
  if (bias.empty()) return;
  const int64_t n = static_cast<int64_t>(bias.size());
  parallel_for(pool, rows, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      for (int64_t i = 0; i < n; ++i) x[r * n + i] += bias[i];
  }, 4);
}

void apply_rope(const ops::Rope& rope, float* x, TokenSpan span, int64_t n_heads,
                int64_t head_dim, const int32_t* positions, Workers& pool) {
  parallel_for(pool, span.tokens, [&](int64_t begin, int64_t end) {
    rope.apply(x + begin * n_heads * head_dim, end - begin, n_heads, head_dim, positions + begin);
  }, 2);
}

void fake_quantize(float* x, int64_t n, float scale, Workers& pool) {
  if (scale <= 0) return;
  parallel_for(pool, n, [&](int64_t begin, int64_t end) {
    fake_quantize_int8(x + begin, end - begin, scale);
  }, 8192);
}

// q and k after projection: QK-norm and RoPE in the configured order.
void position_and_normalise(const AttentionConfig& c, const AttentionWeights& w, TokenSpan span,
                            LayerScratch& s, bool with_k, Workers& pool) {
  const int64_t q_rows = span.tokens * c.n_head, k_rows = span.tokens * c.n_head_kv;
  auto norm = [&] {
    rms_norm_rows(s.q.data(), w.q_norm, c.qk_eps, q_rows, c.head_dim, s.q.data(), pool);
    if (with_k) rms_norm_rows(s.k.data(), w.k_norm, c.qk_eps, k_rows, c.head_dim, s.k.data(), pool);
  };
  if (c.qk_norm == QkNorm::kBeforeRope) norm();
  if (c.rope != nullptr) {
    apply_rope(*c.rope, s.q.data(), span, c.n_head, c.head_dim, s.positions.data(), pool);
    if (with_k) apply_rope(*c.rope, s.k.data(), span, c.n_head_kv, c.head_dim, s.positions.data(), pool);
  }
  if (c.qk_norm == QkNorm::kAfterRope) norm();
}

}  // namespace

LayerScratch::LayerScratch(const AttentionConfig& a, int64_t n_ff, int64_t n_batch, int64_t n_ctx,
                           int n_threads)
    : h(n_batch * a.n_embd),
      q(n_batch * a.n_head * a.head_dim),
      k(n_batch * a.n_head_kv * a.head_dim),
      v(n_batch * a.n_head_kv * a.head_dim),
      attn(n_batch * a.n_head * a.head_dim),
      gate(n_batch * n_ff),
      up(n_batch * n_ff),
      scores(static_cast<size_t>(n_threads) * 4 * n_ctx),  // ops::attention's scratch
      positions(n_batch) {
  act.reserve(n_batch, std::max({a.n_embd, a.n_head * a.head_dim, n_ff}));
}

void rms_norm_rows(const float* x, const std::vector<float>& weight, float eps, int64_t rows,
                   int64_t n, float* y, Workers& pool) {
  parallel_for(pool, rows, [&](int64_t begin, int64_t end) {
    ops::rms_norm(x + begin * n, weight.data(), eps, end - begin, n, y + begin * n);
  }, 8192 / std::max<int64_t>(n, 1));
}

void add_rows(float* x, const float* y, int64_t n, Workers& pool) {
  parallel_for(pool, n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) x[i] += y[i];
  }, 8192);
}

void attention_block(const AttentionConfig& c, const AttentionWeights& w, TokenSpan span,
                     float* x, LayerScratch& s, KvCache& cache, int64_t kv_layer, Workers& pool,
                     const AttentionLora* lora) {
  const SequenceRows one{0, span.tokens, span.pos0, &cache, lora, nullptr, &s.lora};
  attention_block(c, w, {&one, 1}, span.tokens, x, s, kv_layer, pool);
}

void ffn_block(const FfnWeights& w, int64_t n_embd, int64_t n_ff, float eps, TokenSpan span,
               float* x, LayerScratch& s, Workers& pool, const FfnLora* lora) {
  const SequenceRows one{0, span.tokens, span.pos0, nullptr, nullptr, lora, &s.lora};
  ffn_block(w, n_embd, n_ff, eps, {&one, 1}, span.tokens, x, s, pool);
}

void attention_block(const AttentionConfig& c, const AttentionWeights& w,
                     std::span<const SequenceRows> seqs, int64_t n, float* x, LayerScratch& s,
                     int64_t kv_layer, Workers& pool) {
  const int64_t kv_dim = c.n_head_kv * c.head_dim, q_dim = c.n_head * c.head_dim;
  rms_norm_rows(x, w.norm, c.rms_eps, n, c.n_embd, s.h.data(), pool);
  ops::Activations in(s.h.data(), n, c.n_embd, s.act);
  in.set_per_token_rows(s.per_token_rows);
  if (w.has_kv()) {
    ops::matmul_group(in, {{&w.wq, s.q.data()}, {&w.wk, s.k.data()}, {&w.wv, s.v.data()}}, pool);
  } else {
    ops::matmul(in, w.wq, s.q.data(), pool);
  }
  for (const SequenceRows& r : seqs) {
    if (!r.attn_lora) continue;
    const float* h = s.h.data() + r.row0 * c.n_embd;
    if (w.has_kv()) {
      lora_add_group(h, r.tokens,
                     {{&r.attn_lora->q, 0, s.q.data() + r.row0 * q_dim},
                      {&r.attn_lora->k, 0, s.k.data() + r.row0 * kv_dim},
                      {&r.attn_lora->v, 0, s.v.data() + r.row0 * kv_dim}},
                     *r.lora_scratch, pool);
    } else {
      lora_add_group(h, r.tokens, {{&r.attn_lora->q, 0, s.q.data() + r.row0 * q_dim}},
                     *r.lora_scratch, pool);
    }
  }
  if (w.has_kv()) {
    add_bias(s.k.data(), w.k_bias, n, pool);
    add_bias(s.v.data(), w.v_bias, n, pool);
  }
  add_bias(s.q.data(), w.q_bias, n, pool);
  position_and_normalise(c, w, TokenSpan{n, 0}, s, w.has_kv(), pool);
  if (w.has_kv()) {
    fake_quantize(s.k.data(), n * kv_dim, w.k_scale, pool);
    fake_quantize(s.v.data(), n * kv_dim, w.v_scale, pool);
    for (const SequenceRows& r : seqs) {
      parallel_for(pool, r.tokens, [&](int64_t begin, int64_t end) {
        const int64_t row = r.row0 + begin;
        r.cache->write(kv_layer, r.pos0 + begin, end - begin, s.k.data() + row * kv_dim,
                       s.v.data() + row * kv_dim);
      }, 2);
    }
  }
  const ops::AttentionShape shape{c.n_head, c.n_head_kv, c.head_dim, c.window, c.softcap};
  const float scale = c.scale > 0 ? c.scale : 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  for (const SequenceRows& r : seqs) {
    ops::attention(s.q.data() + r.row0 * q_dim, r.tokens, r.pos0, r.cache->layer(kv_layer),
                   shape, scale, s.attn.data() + r.row0 * q_dim, s.scores, pool);
  }
  ops::Activations attn(s.attn.data(), n, q_dim, s.act);
  attn.set_per_token_rows(s.per_token_rows);
  ops::matmul(attn, w.wo, s.h.data(), pool);
  for (const SequenceRows& r : seqs) {
    if (!r.attn_lora) continue;
    lora_add_group(s.attn.data() + r.row0 * q_dim, r.tokens,
                   {{&r.attn_lora->o, 0, s.h.data() + r.row0 * c.n_embd}}, *r.lora_scratch, pool);
  }
  if (!w.post_norm.empty()) rms_norm_rows(s.h.data(), w.post_norm, c.rms_eps, n, c.n_embd, s.h.data(), pool);
  add_rows(x, s.h.data(), n * c.n_embd, pool);
}

void ffn_block(const FfnWeights& w, int64_t n_embd, int64_t n_ff, float eps,
               std::span<const SequenceRows> seqs, int64_t n, float* x, LayerScratch& s,
               Workers& pool) {
  rms_norm_rows(x, w.norm, eps, n, n_embd, s.h.data(), pool);
  ops::Activations in(s.h.data(), n, n_embd, s.act);
  in.set_per_token_rows(s.per_token_rows);
  ops::matmul_group(in, {{&w.gate, s.gate.data()}, {&w.up, s.up.data()}}, pool);
  for (const SequenceRows& r : seqs) {
    if (!r.ffn_lora) continue;
    lora_add_group(s.h.data() + r.row0 * n_embd, r.tokens,
                   {{&r.ffn_lora->gate, 0, s.gate.data() + r.row0 * n_ff},
                    {&r.ffn_lora->up, 0, s.up.data() + r.row0 * n_ff}},
                   *r.lora_scratch, pool);
  }
  ops::gated_inplace(w.activation, s.gate.data(), s.up.data(), n * n_ff, pool);
  ops::Activations act(s.gate.data(), n, n_ff, s.act);
  act.set_per_token_rows(s.per_token_rows);
  ops::matmul(act, w.down, s.h.data(), pool);
  for (const SequenceRows& r : seqs) {
    if (!r.ffn_lora) continue;
    lora_add_group(s.gate.data() + r.row0 * n_ff, r.tokens,
                   {{&r.ffn_lora->down, 0, s.h.data() + r.row0 * n_embd}}, *r.lora_scratch, pool);
  }
  if (!w.post_norm.empty()) rms_norm_rows(s.h.data(), w.post_norm, eps, n, n_embd, s.h.data(), pool);
  add_rows(x, s.h.data(), n * n_embd, pool);
}

}  // namespace afm::model
