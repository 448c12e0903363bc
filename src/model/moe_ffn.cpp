#include "model/moe_ffn.h"

#include <algorithm>
#include <cmath>

#include "model/weights.h"
#include "ops/activation.h"

namespace afm::model {

MoeScratch::MoeScratch(int64_t n_batch, int64_t n_embd, int64_t n_expert, int64_t n_used)
    : router_logits(n_batch * n_expert),
      choice(n_batch * n_used),
      weight(n_batch * n_used),
      expert_begin(n_expert + 1),
      slots(n_batch * n_used),
      gathered(n_batch * n_embd),
      expert_out(n_batch * n_embd),
      sum(n_batch * n_embd) {}

void route_tokens(const float* logits, int64_t tokens, int64_t n_expert, int64_t n_used,
                  int32_t* choice, float* weight) {
  std::vector<float> p(n_expert);
  for (int64_t t = 0; t < tokens; ++t) {
    const float* l = logits + t * n_expert;
    const float max_logit = *std::max_element(l, l + n_expert);
    float total = 0;
    for (int64_t e = 0; e < n_expert; ++e) total += p[e] = std::exp(l[e] - max_logit);
    int32_t* c = choice + t * n_used;
    float* w = weight + t * n_used;
    float chosen = 0;
    for (int64_t j = 0; j < n_used; ++j) {
      int64_t best = -1;
      for (int64_t e = 0; e < n_expert; ++e) {
        if (p[e] >= 0 && (best < 0 || p[e] > p[best])) best = e;
      }
      c[j] = static_cast<int32_t>(best);
      w[j] = p[best] / total;
      chosen += w[j];
      p[best] = -1;  // taken
    }
    for (int64_t j = 0; j < n_used; ++j) w[j] /= chosen;
  }
}

namespace {

// Counting sort of the (token, j) slots by expert: slots[expert_begin[e] .. expert_begin[e+1]).
void group_by_expert(const MoeWeights& w, int64_t tokens, MoeScratch& m) {
  std::fill(m.expert_begin.begin(), m.expert_begin.end(), 0);
  const int64_t n_slots = tokens * w.n_used;
  for (int64_t i = 0; i < n_slots; ++i) ++m.expert_begin[m.choice[i] + 1];
  for (int64_t e = 0; e < w.n_expert; ++e) m.expert_begin[e + 1] += m.expert_begin[e];
  std::vector<int32_t> fill(m.expert_begin.begin(), m.expert_begin.end() - 1);
  for (int64_t i = 0; i < n_slots; ++i) m.slots[fill[m.choice[i]]++] = static_cast<int32_t>(i);
}

// One expert's SwiGLU over its `count` gathered tokens, scattered into m.sum with weights.
void run_expert(const MoeWeights& w, int64_t e, int64_t n_embd, int64_t begin, int64_t count,
                LayerScratch& s, MoeScratch& m, Workers& pool, const FfnLora* lora,
                LoraScratch& ls) {
  const int32_t* slots = m.slots.data() + begin;
  const int64_t n_used = w.n_used;
  parallel_for(pool, count, [&](int64_t b, int64_t end) {
    for (int64_t i = b; i < end; ++i) {
      std::copy_n(s.h.data() + (slots[i] / n_used) * n_embd, n_embd, m.gathered.data() + i * n_embd);
    }
  }, 4);
  const ops::Matrix gate = expert(w.gate_exps, e, w.n_ff_exp), up = expert(w.up_exps, e, w.n_ff_exp);
  const ops::Matrix down = expert(w.down_exps, e, n_embd);
  // Slots are in token order within an expert, so the tokens of per-token rows (decode steps,
  // exact verification) come first: they keep the per-token path they would take alone.
  int64_t per_token = 0;
  while (per_token < count && slots[per_token] / n_used < s.per_token_rows) ++per_token;
  ops::Activations in(m.gathered.data(), count, n_embd, s.act);
  in.set_per_token_rows(per_token);
  ops::matmul_group(in, {{&gate, s.gate.data()}, {&up, s.up.data()}}, pool);
  if (lora) {
    lora_add_group(m.gathered.data(), count,
                   {{&lora->gate_exps, e, s.gate.data()}, {&lora->up_exps, e, s.up.data()}},
                   ls, pool);
  }
  ops::swiglu_inplace(s.gate.data(), s.up.data(), count * w.n_ff_exp, pool);
  ops::Activations act(s.gate.data(), count, w.n_ff_exp, s.act);
  act.set_per_token_rows(per_token);
  ops::matmul(act, down, m.expert_out.data(), pool);
  if (lora) lora_add_group(s.gate.data(), count, {{&lora->down_exps, e, m.expert_out.data()}}, ls, pool);
  // A token appears at most once per expert, so slices of this expert's rows never collide.
  parallel_for(pool, count, [&](int64_t b, int64_t end) {
    for (int64_t i = b; i < end; ++i) {
      const float wt = m.weight[slots[i]];
      float* dst = m.sum.data() + (slots[i] / n_used) * n_embd;
      const float* src = m.expert_out.data() + i * n_embd;
      for (int64_t d = 0; d < n_embd; ++d) dst[d] += wt * src[d];
    }
  }, 4);
}

}  // namespace

void moe_block(const MoeWeights& w, int64_t n_embd, float eps, TokenSpan span, float* x,
               LayerScratch& s, MoeScratch& m, Workers& pool, const FfnLora* lora,
               LoraScratch* lora_scratch) {
  const int64_t n = span.tokens;
  LoraScratch& ls = lora_scratch ? *lora_scratch : s.lora;
  rms_norm_rows(x, w.norm, eps, n, n_embd, s.h.data(), pool);
  ops::Activations in(s.h.data(), n, n_embd, s.act);
  in.set_per_token_rows(s.per_token_rows);
  ops::matmul(in, w.router, m.router_logits.data(), pool);
  if (lora) lora_add_group(s.h.data(), n, {{&lora->router, 0, m.router_logits.data()}}, ls, pool);
  pool.once([&] {
    route_tokens(m.router_logits.data(), n, w.n_expert, w.n_used, m.choice.data(), m.weight.data());
    group_by_expert(w, n, m);
    std::fill_n(m.sum.data(), n * n_embd, 0.0f);
  });
  for (int64_t e = 0; e < w.n_expert; ++e) {
    const int64_t begin = m.expert_begin[e], count = m.expert_begin[e + 1] - begin;
    if (count > 0) run_expert(w, e, n_embd, begin, count, s, m, pool, lora, ls);
  }
  add_rows(x, m.sum.data(), n * n_embd, pool);
}

}  // namespace afm::model
