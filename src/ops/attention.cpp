#include "ops/attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/vec.h"

namespace afm::ops {
namespace {

size_t elem_bytes(KvType type) {
  return type == KvType::kF32 ? 4 : type == KvType::kF16 ? 2 : 1;
}

// One head's cache rows [first, first + n): the kernels' view of a contiguous run of slots.
struct Rows {
  int64_t first, n;
};

void row_scores(const float* q, const KvLayerView& kv, int64_t kv_head, Rows rows, int64_t d,
                float scale, float* scores, const cpu::VecKernels& vk) {
  const size_t row = static_cast<size_t>(kv_head * kv.capacity + rows.first);
  const uint8_t* k = static_cast<const uint8_t*>(kv.k) + row * d * elem_bytes(kv.type);
  switch (kv.type) {
    case KvType::kF32:
      return vk.scores_f32(q, reinterpret_cast<const float*>(k), rows.n, d, scale, scores);
    case KvType::kF16:
      return vk.scores_f16(q, reinterpret_cast<const uint16_t*>(k), rows.n, d, scale, scores);
    case KvType::kQ8:
      return vk.scores_q8(q, reinterpret_cast<const int8_t*>(k),
                          kv.k_scales ? kv.k_scales + row : nullptr, rows.n, d,
                          kv.k_scales ? scale : scale * kv.k_uniform, scores);
  }
}

void row_mix(const float* p, const KvLayerView& kv, int64_t kv_head, Rows rows, int64_t d,
             float* out, const cpu::VecKernels& vk) {
  const size_t row = static_cast<size_t>(kv_head * kv.capacity + rows.first);
  const uint8_t* v = static_cast<const uint8_t*>(kv.v) + row * d * elem_bytes(kv.type);
  switch (kv.type) {
    case KvType::kF32:
      return vk.mix_f32(p, reinterpret_cast<const float*>(v), rows.n, d, out);
    case KvType::kF16:
      return vk.mix_f16(p, reinterpret_cast<const uint16_t*>(v), rows.n, d, out);
    case KvType::kQ8:
      return vk.mix_q8(p, reinterpret_cast<const int8_t*>(v),
                       kv.v_scales ? kv.v_scales + row : nullptr, kv.v_uniform, rows.n, d, out);
  }
}

void softmax_inplace(float* x, int64_t n) {
  float max_score = -INFINITY;
  for (int64_t j = 0; j < n; ++j) max_score = std::max(max_score, x[j]);
  float sum = 0;
  for (int64_t j = 0; j < n; ++j) {
    x[j] = std::exp(x[j] - max_score);
    sum += x[j];
  }
  const float inv = 1.0f / sum;
  for (int64_t j = 0; j < n; ++j) x[j] *= inv;
}

// The query heads of one item: one head, or two that share a KV head (grouped-query attention).
struct Heads {
  int n;                 // 1 or 2
  const float* q[2];     // (head_dim) each
  float* scores[2];      // (hi - lo + 1) each
  float* out[2];         // (head_dim) each
};

// An f16 cache converts each row once for a pair of heads where the vector set has pair kernels
// (VecKernels::*_pair, bit-identical to one head at a time); otherwise heads go one by one.
void heads_scores(const Heads& h, const KvLayerView& kv, int64_t kv_head, Rows rows, int64_t at,
                  int64_t d, float scale, const cpu::VecKernels& vk) {
  if (h.n == 2 && kv.type == KvType::kF16 && vk.scores_f16_pair != nullptr) {
    const size_t row = static_cast<size_t>(kv_head * kv.capacity + rows.first);
    vk.scores_f16_pair(h.q[0], h.q[1], static_cast<const uint16_t*>(kv.k) + row * d, rows.n, d, scale,
                       h.scores[0] + at, h.scores[1] + at);
    return;
  }
  for (int i = 0; i < h.n; ++i) row_scores(h.q[i], kv, kv_head, rows, d, scale, h.scores[i] + at, vk);
}

void heads_mix(const Heads& h, const KvLayerView& kv, int64_t kv_head, Rows rows, int64_t at,
               int64_t d, const cpu::VecKernels& vk) {
  if (h.n == 2 && kv.type == KvType::kF16 && vk.mix_f16_pair != nullptr) {
    const size_t row = static_cast<size_t>(kv_head * kv.capacity + rows.first);
    vk.mix_f16_pair(h.scores[0] + at, h.scores[1] + at, static_cast<const uint16_t*>(kv.v) + row * d,
                    rows.n, d, h.out[0], h.out[1]);
    return;
  }
  for (int i = 0; i < h.n; ++i) row_mix(h.scores[i] + at, kv, kv_head, rows, d, h.out[i], vk);
}

// One query's heads over positions [lo, hi]: at most two runs of slots (a ring wraps once).
void attend(const Heads& h, const KvLayerView& kv, int64_t kv_head, int64_t lo, int64_t hi,
            int64_t d, float scale, const cpu::VecKernels& vk) {
  Rows runs[2];
  int n_runs = 1;
  const int64_t n = hi - lo + 1;
  if (!kv.ring) {
    runs[0] = {lo, n};
  } else {
    const int64_t first = lo % kv.capacity;
    const int64_t until_end = std::min(n, kv.capacity - first);
    runs[0] = {first, until_end};
    if (until_end < n) runs[n_runs++] = {0, n - until_end};
  }
  for (int r = 0, at = 0; r < n_runs; at += runs[r].n, ++r) heads_scores(h, kv, kv_head, runs[r], at, d, scale, vk);
  for (int i = 0; i < h.n; ++i) {
    softmax_inplace(h.scores[i], n);
    std::memset(h.out[i], 0, d * sizeof(float));
  }
  for (int r = 0, at = 0; r < n_runs; at += runs[r].n, ++r) heads_mix(h, kv, kv_head, runs[r], at, d, vk);
}

}  // namespace

const char* kv_type_name(KvType type) {
  switch (type) {
    case KvType::kF32: return "f32";
    case KvType::kF16: return "f16";
    case KvType::kQ8: return "q8";
  }
  return "?";
}

void attention(const float* q, int64_t tokens, int64_t pos0, const KvLayerView& kv,
               const AttentionShape& shape, float scale, float* out, std::vector<float>& scratch,
               Workers& pool) {
  const int64_t max_keys = pos0 + tokens;
  const size_t need = static_cast<size_t>(pool.size()) * 2 * max_keys;
  if (scratch.size() < need) scratch.resize(need);
  const int64_t group = shape.n_head / shape.n_head_kv;
  const int64_t pairs = (group + 1) / 2;  // items per (query, KV head): heads two at a time
  const cpu::VecKernels& vk = cpu::best_vec_kernels();
  pool.run([&](int index, int count) {
    float* scores = scratch.data() + index * 2 * max_keys;
    const Range items = split_range(tokens * shape.n_head_kv * pairs, index, count);
    for (int64_t item = items.begin; item < items.end; ++item) {
      const int64_t t = item / (shape.n_head_kv * pairs), kv_head = item / pairs % shape.n_head_kv;
      const int64_t h0 = kv_head * group + 2 * (item % pairs);
      Heads h{static_cast<int>(std::min<int64_t>(2, (kv_head + 1) * group - h0)), {}, {scores, scores + max_keys}, {}};
      for (int i = 0; i < h.n; ++i) {
        const int64_t offset = (t * shape.n_head + h0 + i) * shape.head_dim;
        h.q[i] = q + offset;
        h.out[i] = out + offset;
      }
      const int64_t hi = pos0 + t;
      const int64_t lo = shape.window > 0 ? std::max<int64_t>(0, hi - shape.window + 1) : 0;
      attend(h, kv, kv_head, lo, hi, shape.head_dim, scale, vk);
    }
  });
}

}  // namespace afm::ops
