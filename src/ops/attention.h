// Causal scaled-dot-product attention of a batch of queries against one layer's KV cache, with
// grouped-query heads (n_head a multiple of n_head_kv). Parallel over (query, head).
#pragma once

#include <cstdint>
#include <vector>

#include "base/thread_pool.h"

namespace afm::ops {

enum class KvType { kF32, kF16 };

// One layer's cache: K and V laid out (n_head_kv, capacity, head_dim) in `type`.
struct KvLayerView {
  KvType type;
  const void* k;
  const void* v;
  int64_t capacity;
};

struct AttentionShape {
  int64_t n_head, n_head_kv, head_dim;
};

// q: (tokens, n_head, head_dim) for positions pos0 .. pos0 + tokens - 1, whose K/V are already
// in the cache. Query t attends to cache positions [0, pos0 + t]. out: (tokens, n_head * head_dim).
// scratch grows to n_threads * (pos0 + tokens) floats once.
void attention(const float* q, int64_t tokens, int64_t pos0, const KvLayerView& kv,
               const AttentionShape& shape, float scale, float* out, std::vector<float>& scratch,
               ThreadPool& pool);

}  // namespace afm::ops
