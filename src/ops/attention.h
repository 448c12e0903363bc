// Causal scaled-dot-product attention of a batch of queries against one layer's KV cache, with
// grouped-query heads (n_head a multiple of n_head_kv), an optional sliding window and a cache
// that is either linear (position p in slot p) or a ring (slot p % capacity). Parallel over
// (pair of consecutive queries, pair of query heads sharing a KV head), so that each cached row
// is read once for up to four query rows; each query head's result is the same whatever the
// batch, the grouping or the thread count (bit-identical: speculative verification relies on it).
#pragma once

#include <cstdint>
#include <vector>

#include "base/thread_pool.h"

namespace afm::ops {

// kQ8: int8 values with a scale per (head, position) row, or one learned scale per layer.
enum class KvType { kF32, kF16, kQ8 };

const char* kv_type_name(KvType type);  // "f32", "f16", "q8"

// One layer's cache: K and V laid out (n_head_kv, capacity, head_dim) in `type`.
struct KvLayerView {
  KvType type;
  const void* k;
  const void* v;
  int64_t capacity;
  bool ring = false;                // position p is stored in slot p % capacity
  const float* k_scales = nullptr;  // kQ8: (n_head_kv, capacity) row scales, or null: k_uniform
  const float* v_scales = nullptr;
  float k_uniform = 1.0f, v_uniform = 1.0f;
};

struct AttentionShape {
  int64_t n_head, n_head_kv, head_dim;
  int64_t window = 0;  // > 0: the query at position p sees only positions p - window + 1 .. p
  float softcap = 0;   // > 0: scores become softcap * tanh(score / softcap) before the softmax
};

// q: (tokens, n_head, head_dim) for positions pos0 .. pos0 + tokens - 1, whose K/V are already
// in the cache. Query t attends to positions [lo, pos0 + t] (lo = 0 or the window's start), all
// of which the cache must still hold. out: (tokens, n_head * head_dim).
// scratch grows to n_threads * 4 * (pos0 + tokens) floats (reserve it first on a ThreadTeam).
void attention(const float* q, int64_t tokens, int64_t pos0, const KvLayerView& kv,
               const AttentionShape& shape, float scale, float* out, std::vector<float>& scratch,
               Workers& pool);

}  // namespace afm::ops
