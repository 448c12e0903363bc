// Per-sequence key/value cache for the layers that own K/V, laid out per layer as
// (n_head_kv, capacity, head_dim) so one head's keys are contiguous for attention.
//
// Each cached layer has its own capacity: a full-context layer stores position p in slot p; a
// sliding-window layer is a ring (slot p % capacity), so its memory does not grow with context.
// Types: f16 (default), f32, or q8 = int8 with one scale per (head, position) row (absmax / 127)
// or, when the model learned one (afm7's quant_key_scale / quant_value_scale), that single
// per-layer scale, which makes the int8 cache exactly the model's own fake-quantised K/V.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/attention.h"

namespace afm::model {

struct KvLayerSpec {
  int64_t capacity = 0;
  bool ring = false;
  float k_scale = 0, v_scale = 0;  // learned int8 scales; 0: none (per-row absmax for q8)
};

class KvCache {
 public:
  KvCache(std::vector<KvLayerSpec> layers, int64_t n_head_kv, int64_t head_dim, ops::KvType type);
  // n_layers full-context layers of `capacity` positions, no learned scales.
  KvCache(int64_t n_layers, int64_t n_head_kv, int64_t head_dim, int64_t capacity,
          ops::KvType type);

  ops::KvType type() const { return type_; }
  int64_t n_layers() const { return static_cast<int64_t>(layers_.size()); }
  size_t bytes() const;  // everything allocated
  // Bytes each further position adds: the full-context layers' K and V (rings are fixed).
  size_t bytes_per_token() const;

  // k, v: (tokens, n_head_kv, head_dim) for positions pos0 .. pos0 + tokens - 1.
  void write(int64_t layer, int64_t pos0, int64_t tokens, const float* k, const float* v);
  ops::KvLayerView layer(int64_t layer) const;

 private:
  struct Layer {
    KvLayerSpec spec;
    std::vector<uint8_t> k, v;
    std::vector<float> k_scales, v_scales;  // q8 without learned scales
  };
  void write_row(Layer& l, bool is_k, int64_t head, int64_t slot, const float* x);
  size_t row_bytes() const;

  int64_t n_head_kv_, head_dim_;
  ops::KvType type_;
  std::vector<Layer> layers_;
};

// x = clamp(round_half_even(x / scale), -128, 127) * scale: afm7's fake 8-bit K/V quantisation.
void fake_quantize_int8(float* x, int64_t n, float scale);

}  // namespace afm::model
