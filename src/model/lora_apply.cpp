#include "model/lora_apply.h"

#include <algorithm>

#include "base/error.h"
#include "backend/cpu/gemm.h"
#include "backend/cpu/vec.h"
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

void LoraScratch::reserve(int64_t tokens, int64_t max_in, int64_t max_rank, int threads) {
  mid.resize(std::max<size_t>(mid.size(), tokens * max_rank));
  act.reserve(tokens, std::max(max_in, max_rank));
  // Per thread: x rounded to f16 (tokens, in), then (tokens, rank) per target of a group.
  per_thread_floats = std::max(per_thread_floats,
                               kLoraFusedTokens * (max_in + kLoraMaxGroup * max_rank));
  per_thread.resize(std::max<size_t>(per_thread.size(), per_thread_floats * std::max(threads, 1)));
}

namespace {

bool fusable(const LoraTarget& t) {
  const auto is_float = [](gguf::TensorType ty) {
    return ty == gguf::TensorType::kF32 || ty == gguf::TensorType::kF16;
  };
  return is_float(t.pair->a.type) && is_float(t.pair->b.type);
}

// The gemm kernel for an f32 / f16 matrix (inputs f16-rounded by the caller for f16).
cpu::GemmKernel kernel_for(const ops::Matrix& m) {
  const cpu::GemmKernels& k = cpu::best_gemm_kernels();
  return m.type == gguf::TensorType::kF16 ? k.f16 : k.f32;
}

// One worker's part of a fused group: all of x · Aᵀ for every output (its own copy, so no
// barrier is needed), then rows [begin, end) of the concatenated outputs of · Bᵀ.
void fused_worker(const float* x, int64_t tokens, const LoraOutput* outs, int64_t n_outs,
                  float* scratch, int thread, int count) {
  const cpu::VecKernels& vk = cpu::best_vec_kernels();
  const int64_t in = outs[0].target->pair->in;
  float* x16 = scratch;  // (tokens, in) rounded through f16, for f16 A
  float* mids = x16 + kLoraFusedTokens * in;
  bool rounded = false;
  int64_t total_rows = 0, mid_floats = 0;
  for (int64_t k = 0; k < n_outs; ++k) {
    const LoraPair& p = *outs[k].target->pair;
    const ops::Matrix a = expert(p.a, outs[k].slice, p.rank);
    if (a.type == gguf::TensorType::kF16 && !rounded) vk.round_f16(x, x16, tokens * in), rounded = true;
    float* mid = mids + mid_floats;  // (tokens, rank)
    kernel_for(a)(a.data, a.row_bytes, p.rank, a.type == gguf::TensorType::kF16 ? x16 : x,
                  in * sizeof(float), tokens, in, mid, p.rank);
    if (p.b.type == gguf::TensorType::kF16) vk.round_f16(mid, mid, tokens * p.rank);
    mid_floats += kLoraFusedTokens * p.rank;
    total_rows += p.out;
  }
  const Range mine = split_range(total_rows, thread, count, 16);
  int64_t first = 0;
  mid_floats = 0;
  for (int64_t k = 0; k < n_outs; ++k) {
    const LoraPair& p = *outs[k].target->pair;
    const int64_t begin = std::max(mine.begin - first, int64_t{0});
    const int64_t end = std::min(mine.end - first, p.out);
    // y[t, begin:end] += s · sum_r mid[t, r] · Bᵀ[r, begin:end]: rank long axpys per token.
    const float* bt = p.b_t.data() + outs[k].slice * p.rank * p.out + begin;
    const float scale = outs[k].target->scale;
    for (int64_t t = 0; begin < end && t < tokens; ++t) {
      const float* mid = mids + mid_floats + t * p.rank;
      float* y = outs[k].y + t * p.out + begin;
      for (int64_t r = 0; r < p.rank; ++r) vk.axpy_f32(scale * mid[r], bt + r * p.out, y, end - begin);
    }
    first += p.out;
    mid_floats += kLoraFusedTokens * p.rank;
  }
}

}  // namespace

void lora_add_group(const float* x, int64_t tokens, std::initializer_list<LoraOutput> outputs,
                    LoraScratch& s, Workers& pool) {
  LoraOutput outs[kLoraMaxGroup];
  int64_t n = 0;
  bool fused = tokens <= kLoraFusedTokens && pool.size() * s.per_thread_floats <=
                                                 static_cast<int64_t>(s.per_thread.size());
  for (const LoraOutput& o : outputs) {
    if (!o.target || !*o.target) continue;
    AFM_CHECK(n < kLoraMaxGroup);
    outs[n++] = o;
    fused = fused && fusable(*o.target) && o.target->pair->in == outs[0].target->pair->in;
  }
  if (n == 0) return;
  if (!fused) {
    for (int64_t k = 0; k < n; ++k) lora_add(x, tokens, *outs[k].target, outs[k].slice, outs[k].y, s, pool);
    return;
  }
  pool.run([&](int thread, int count) {
    fused_worker(x, tokens, outs, n, s.per_thread.data() + thread * s.per_thread_floats, thread,
                 count);
  });
}

void lora_add(const float* x, int64_t tokens, const LoraTarget& t, int64_t slice, float* y,
              LoraScratch& s, Workers& pool) {
  const LoraPair& p = *t.pair;
  const ops::Matrix a = expert(p.a, slice, p.rank);
  AFM_CHECK(static_cast<size_t>(tokens * p.rank) <= s.mid.size());
  ops::Activations in(x, tokens, p.in, s.act);
  ops::matmul(in, a, s.mid.data(), pool);  // (tokens, rank)
  const cpu::VecKernels& vk = cpu::best_vec_kernels();
  // f16 B sees f16-rounded inputs, as the f16 matmul kernels (and llama.cpp) compute it.
  if (p.b.type == gguf::TensorType::kF16) vk.round_f16(s.mid.data(), s.mid.data(), tokens * p.rank);
  // y[:, o0:o1] += s · mid · Bᵀ[:, o0:o1], split by output columns: rank long axpys per token
  // over the transposed B, so no (tokens, out) temporary and no second pass.
  const float* bt = p.b_t.data() + slice * p.rank * p.out;
  const float scale = t.scale;
  parallel_for(pool, p.out, [&](int64_t o0, int64_t o1) {
    for (int64_t tok = 0; tok < tokens; ++tok) {
      const float* mid = s.mid.data() + tok * p.rank;
      for (int64_t r = 0; r < p.rank; ++r) {
        vk.axpy_f32(scale * mid[r], bt + r * p.out + o0, y + tok * p.out + o0, o1 - o0);
      }
    }
  }, 2048 / std::max<int64_t>(tokens, 1));
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
