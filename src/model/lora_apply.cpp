#include "model/lora_apply.h"

#include <algorithm>

#include "base/error.h"
#include "model/weights.h"
#include "ops/embedding.h"

namespace afm::model {

LoraTarget resolve_lora(const LoraAdapter& adapter, float user_scale, const std::string& name) {
  const LoraPair* p = adapter.find(name);
  return p ? LoraTarget{p, adapter.scale_for(*p, user_scale)} : LoraTarget{};
}

LayerLora resolve_layer_lora(const LoraAdapter& adapter, float user_scale,
                             const std::string& prefix) {
  auto get = [&](const char* name) { return resolve_lora(adapter, user_scale, prefix + name); };
  LayerLora l;
  l.attn = {get("attn_q.weight"), get("attn_k.weight"), get("attn_v.weight"),
            get("attn_output.weight")};
  l.ffn.gate = get("ffn_gate.weight");
  l.ffn.up = get("ffn_up.weight");
  l.ffn.down = get("ffn_down.weight");
  l.ffn.router = get("ffn_gate_inp.weight");
  l.ffn.gate_exps = get("ffn_gate_exps.weight");
  l.ffn.up_exps = get("ffn_up_exps.weight");
  l.ffn.down_exps = get("ffn_down_exps.weight");
  return l;
}

void LoraScratch::reserve(int64_t tokens, int64_t max_in, int64_t max_rank, int64_t max_out) {
  mid.resize(std::max<size_t>(mid.size(), tokens * max_rank));
  delta.resize(std::max<size_t>(delta.size(), tokens * max_out));
  act.reserve(tokens, std::max(max_in, max_rank));
}

void lora_add(const float* x, int64_t tokens, const LoraTarget& t, int64_t slice, float* y,
              LoraScratch& s, Workers& pool) {
  const LoraPair& p = *t.pair;
  const ops::Matrix a = expert(p.a, slice, p.rank), b = expert(p.b, slice, p.out);
  AFM_CHECK(static_cast<size_t>(tokens * p.rank) <= s.mid.size() &&
            s.delta.size() >= static_cast<size_t>(p.out));
  // Outputs wider than the scratch (a vocabulary head) go through in chunks of tokens.
  const int64_t chunk = std::min<int64_t>(tokens, s.delta.size() / p.out);
  for (int64_t t0 = 0; t0 < tokens; t0 += chunk) {
    const int64_t n = std::min(chunk, tokens - t0);
    ops::Activations in(x + t0 * p.in, n, p.in, s.act);
    ops::matmul(in, a, s.mid.data(), pool);  // (n, rank)
    ops::Activations mid(s.mid.data(), n, p.rank, s.act);
    ops::matmul(mid, b, s.delta.data(), pool);  // (n, out)
    float* dst = y + t0 * p.out;
    const float scale = t.scale;
    parallel_for(pool, n * p.out, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) dst[i] += scale * s.delta[i];
    }, 8192);
  }
}

void lora_add_reference(const float* x, int64_t tokens, const LoraTarget& t, int64_t slice,
                        float* y) {
  const LoraPair& p = *t.pair;
  const ops::Matrix a = expert(p.a, slice, p.rank), b = expert(p.b, slice, p.out);
  std::vector<float> a_rows(p.rank * p.in), b_rows(p.out * p.rank);
  for (int64_t r = 0; r < p.rank; ++r) ops::dequantize_row(a, r, a_rows.data() + r * p.in);
  for (int64_t o = 0; o < p.out; ++o) ops::dequantize_row(b, o, b_rows.data() + o * p.rank);
  std::vector<double> mid(p.rank);
  for (int64_t tok = 0; tok < tokens; ++tok) {
    for (int64_t r = 0; r < p.rank; ++r) {
      double acc = 0;
      for (int64_t i = 0; i < p.in; ++i) acc += double{x[tok * p.in + i]} * a_rows[r * p.in + i];
      mid[r] = acc;
    }
    for (int64_t o = 0; o < p.out; ++o) {
      double acc = 0;
      for (int64_t r = 0; r < p.rank; ++r) acc += mid[r] * b_rows[o * p.rank + r];
      y[tok * p.out + o] += static_cast<float>(t.scale * acc);
    }
  }
}

}  // namespace afm::model
