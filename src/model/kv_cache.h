// Per-sequence key/value cache for the layers that own K/V, laid out per layer as
// (n_head_kv, capacity, head_dim) so one head's keys are contiguous for attention.
// f16 by default (half the bytes of f32, within the noise of the model's own error).
#pragma once

#include <cstdint>
#include <vector>

#include "ops/attention.h"

namespace afm::model {

class KvCache {
 public:
  KvCache(int64_t n_layers, int64_t n_head_kv, int64_t head_dim, int64_t capacity,
          ops::KvType type);

  int64_t capacity() const { return capacity_; }
  ops::KvType type() const { return type_; }
  size_t bytes() const { return k_.size() + v_.size(); }
  // Bytes one token position takes across all cached layers (K and V).
  size_t bytes_per_token() const;

  // k, v: (tokens, n_head_kv, head_dim) for positions pos0 .. pos0 + tokens - 1.
  void write(int64_t layer, int64_t pos0, int64_t tokens, const float* k, const float* v);
  ops::KvLayerView layer(int64_t layer) const;

 private:
  uint8_t* slot(std::vector<uint8_t>& data, int64_t layer, int64_t head, int64_t pos);

  int64_t n_layers_, n_head_kv_, head_dim_, capacity_;
  ops::KvType type_;
  size_t elem_bytes_;
  std::vector<uint8_t> k_, v_;
};

}  // namespace afm::model
