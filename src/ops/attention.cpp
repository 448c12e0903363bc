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

// Gemma 2's attention logit soft-capping.
void cap_scores(float* x, int64_t n, float cap) {
  for (int64_t j = 0; j < n; ++j) x[j] = cap * std::tanh(x[j] / cap);
}

// Calls fn(rows, offset) for the runs of cache slots that hold positions [lo, hi], in position
// order (a ring wraps at most once); offset counts positions from lo.
template <class Fn>
void for_runs(const KvLayerView& kv, int64_t lo, int64_t hi, Fn fn) {
  const int64_t n = hi - lo + 1;
  if (n <= 0) return;
  if (!kv.ring) return fn(Rows{lo, n}, 0);
  const int64_t first = lo % kv.capacity;
  const int64_t until_end = std::min(n, kv.capacity - first);
  fn(Rows{first, until_end}, 0);
  if (until_end < n) fn(Rows{0, n - until_end}, until_end);
}

// Several query rows (heads and queries that share a KV head) over the same positions
// [lo, hi]: row i's scores go to s[i][0 ..], its mixed values into out[i]. An f16 cache converts
// each cache row once for four or two query rows where the vector set has those kernels
// (bit-identical to one row at a time); otherwise the rows go one by one.
struct SpanRows {
  int n;  // 1 .. 4
  const float* q[4];
  float* s[4];
  float* out[4];
};

void span_scores(const SpanRows& r, const KvLayerView& kv, int64_t kv_head, int64_t lo, int64_t hi,
                 int64_t d, float scale, const cpu::VecKernels& vk) {
  for_runs(kv, lo, hi, [&](Rows rows, int64_t at) {
    const auto* k = static_cast<const uint16_t*>(kv.k) + static_cast<size_t>(kv_head * kv.capacity + rows.first) * d;
    float* s[4] = {};
    for (int j = 0; j < r.n; ++j) s[j] = r.s[j] + at;
    int i = 0;
    if (kv.type == KvType::kF16 && r.n == 4 && vk.scores_f16_quad != nullptr) {
      vk.scores_f16_quad(r.q, k, rows.n, d, scale, s);
      i = 4;
    }
    for (; kv.type == KvType::kF16 && i + 2 <= r.n && vk.scores_f16_pair != nullptr; i += 2) {
      vk.scores_f16_pair(r.q[i], r.q[i + 1], k, rows.n, d, scale, s[i], s[i + 1]);
    }
    for (; i < r.n; ++i) row_scores(r.q[i], kv, kv_head, rows, d, scale, s[i], vk);
  });
}

// Adds the rows' mix over [lo, hi] to out (p: the softmaxed scores, as span_scores laid them).
void span_mix(const SpanRows& r, const KvLayerView& kv, int64_t kv_head, int64_t lo, int64_t hi,
              int64_t d, const cpu::VecKernels& vk) {
  for_runs(kv, lo, hi, [&](Rows rows, int64_t at) {
    const auto* v = static_cast<const uint16_t*>(kv.v) + static_cast<size_t>(kv_head * kv.capacity + rows.first) * d;
    const float* p[4] = {};
    for (int j = 0; j < r.n; ++j) p[j] = r.s[j] + at;
    int i = 0;
    if (kv.type == KvType::kF16 && r.n == 4 && vk.mix_f16_quad != nullptr) {
      vk.mix_f16_quad(p, v, rows.n, d, r.out);
      i = 4;
    }
    for (; kv.type == KvType::kF16 && i + 2 <= r.n && vk.mix_f16_pair != nullptr; i += 2) {
      vk.mix_f16_pair(p[i], p[i + 1], v, rows.n, d, r.out[i], r.out[i + 1]);
    }
    for (; i < r.n; ++i) row_mix(p[i], kv, kv_head, rows, d, r.out[i], vk);
  });
}

// The query rows of one item: the heads (one or two) that share a KV head, of one or two
// consecutive queries. Query b sees positions [lo[b], hi[b]]; with two, lo[0] <= lo[1] and
// hi[1] = hi[0] + 1.
struct Item {
  int queries, heads;
  int64_t lo[2], hi[2];
  const float* q[2][2];  // [query][head], head_dim each
  float* scores[2][2];   // hi - lo + 1 entries each
  float* out[2][2];
};

// The rows of `queries` (a bit set: 1 = query 0, 2 = query 1), their scores starting `first[b]`
// positions into query b's row.
SpanRows rows_of(const Item& it, unsigned queries, const int64_t first[2]) {
  SpanRows r{0, {}, {}, {}};
  for (int b = 0; b < it.queries; ++b) {
    if (!(queries >> b & 1)) continue;
    for (int h = 0; h < it.heads; ++h, ++r.n) {
      r.q[r.n] = it.q[b][h];
      r.s[r.n] = it.scores[b][h] + first[b];
      r.out[r.n] = it.out[b][h];
    }
  }
  return r;
}

// Query 0 alone over [lo0, lo1 - 1], both over [lo1, hi0], query 1 alone at hi1: each query's
// scores and its mix over the cache in position order, as if it were computed alone.
void attend(const Item& it, const KvLayerView& kv, int64_t kv_head, int64_t d, float scale,
            float softcap, const cpu::VecKernels& vk) {
  const int64_t zero[2] = {0, 0};
  if (it.queries == 1) {
    span_scores(rows_of(it, 1, zero), kv, kv_head, it.lo[0], it.hi[0], d, scale, vk);
  } else {
    const int64_t shared[2] = {it.lo[1] - it.lo[0], 0}, last[2] = {0, it.hi[1] - it.lo[1]};
    span_scores(rows_of(it, 1, zero), kv, kv_head, it.lo[0], std::min(it.lo[1] - 1, it.hi[0]), d, scale, vk);
    span_scores(rows_of(it, 3, shared), kv, kv_head, it.lo[1], it.hi[0], d, scale, vk);
    span_scores(rows_of(it, 2, last), kv, kv_head, it.hi[1], it.hi[1], d, scale, vk);
  }
  for (int b = 0; b < it.queries; ++b) {
    for (int h = 0; h < it.heads; ++h) {
      if (softcap > 0) cap_scores(it.scores[b][h], it.hi[b] - it.lo[b] + 1, softcap);
      vk.softmax(it.scores[b][h], it.hi[b] - it.lo[b] + 1);
      std::memset(it.out[b][h], 0, d * sizeof(float));
    }
  }
  if (it.queries == 1) {
    span_mix(rows_of(it, 1, zero), kv, kv_head, it.lo[0], it.hi[0], d, vk);
  } else {
    const int64_t shared[2] = {it.lo[1] - it.lo[0], 0}, last[2] = {0, it.hi[1] - it.lo[1]};
    span_mix(rows_of(it, 1, zero), kv, kv_head, it.lo[0], std::min(it.lo[1] - 1, it.hi[0]), d, vk);
    span_mix(rows_of(it, 3, shared), kv, kv_head, it.lo[1], it.hi[0], d, vk);
    span_mix(rows_of(it, 2, last), kv, kv_head, it.hi[1], it.hi[1], d, vk);
  }
}

// Keys seen by queries 0 .. n - 1 of a prompt starting at pos0: query t sees pos0 + t + 1, at
// most `window` (0: no window).
int64_t keys_before(int64_t n, int64_t pos0, int64_t window) {
  const int64_t rising = window > 0 ? std::clamp<int64_t>(window - pos0, 0, n) : n;
  return rising * (pos0 + 1) + rising * (rising - 1) / 2 + (n - rising) * window;
}

// The first item of thread `index`'s share when items (query pairs outermost, per_pair items
// each) are cut where the keys visited reach equal shares. Items are scored by their pair's
// keys: an even split by count gave the last thread of a causal prompt ~3x the first's work.
int64_t balanced_cut(int index, int count, int64_t tokens, int64_t per_pair, int64_t pos0,
                     int64_t window) {
  const int64_t items = (tokens + 1) / 2 * per_pair;
  if (index <= 0) return 0;
  if (index >= count) return items;
  // Keys before item m, times per_pair (an item's share of its pair's keys stays whole).
  auto scaled_keys = [&](int64_t m) {
    const int64_t pair = m / per_pair, before = keys_before(std::min(2 * pair, tokens), pos0, window);
    const int64_t pair_keys = keys_before(std::min(2 * pair + 2, tokens), pos0, window) - before;
    return before * per_pair + (m % per_pair) * pair_keys;
  };
  const int64_t target = scaled_keys(items) / count * index;
  int64_t lo = 0, hi = items;  // the first m with scaled_keys(m) >= target
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (scaled_keys(mid) >= target) hi = mid; else lo = mid + 1;
  }
  return lo;
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
  const size_t need = static_cast<size_t>(pool.size()) * 4 * max_keys;
  if (scratch.size() < need) scratch.resize(need);
  const int64_t group = shape.n_head / shape.n_head_kv;
  // Items: (pair of consecutive queries, KV head, pair of its query heads).
  const int64_t head_pairs = (group + 1) / 2;
  const cpu::VecKernels& vk = cpu::best_vec_kernels();
  pool.run([&](int index, int count) {
    float* scores = scratch.data() + index * 4 * max_keys;
    const int64_t per_pair = shape.n_head_kv * head_pairs;
    const Range items{balanced_cut(index, count, tokens, per_pair, pos0, shape.window),
                      balanced_cut(index + 1, count, tokens, per_pair, pos0, shape.window)};
    for (int64_t item = items.begin; item < items.end; ++item) {
      const int64_t t0 = 2 * (item / (shape.n_head_kv * head_pairs));
      const int64_t kv_head = item / head_pairs % shape.n_head_kv;
      const int64_t h0 = kv_head * group + 2 * (item % head_pairs);
      Item it{static_cast<int>(std::min<int64_t>(2, tokens - t0)),
              static_cast<int>(std::min<int64_t>(2, (kv_head + 1) * group - h0)), {}, {}, {}, {}, {}};
      for (int b = 0; b < it.queries; ++b) {
        it.hi[b] = pos0 + t0 + b;
        it.lo[b] = shape.window > 0 ? std::max<int64_t>(0, it.hi[b] - shape.window + 1) : 0;
        for (int h = 0; h < it.heads; ++h) {
          const int64_t offset = ((t0 + b) * shape.n_head + h0 + h) * shape.head_dim;
          it.q[b][h] = q + offset;
          it.out[b][h] = out + offset;
          it.scores[b][h] = scores + (2 * b + h) * max_keys;
        }
      }
      attend(it, kv, kv_head, shape.head_dim, scale, shape.softcap, vk);
    }
  });
}

}  // namespace afm::ops
