#include "model/kv_cache.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/vec.h"
#include "base/error.h"

namespace afm::model {
namespace {

size_t elem_bytes(ops::KvType type) {
  return type == ops::KvType::kF32 ? 4 : type == ops::KvType::kF16 ? 2 : 1;
}

// x / scale (a division, as afm7 computes it: x * (1 / scale) can differ by an ulp at a tie),
// rounded half to even like mlx's round. NaN (from a broken model) maps to 0 rather than into
// an undefined float-to-int conversion.
int8_t quantize_int8(float x, float scale) {
  const float r = std::nearbyint(x / scale);
  if (std::isnan(r)) return 0;
  return static_cast<int8_t>(std::clamp(r, -128.0f, 127.0f));
}

// Returns the row's scale: `fixed` when > 0, else absmax / 127 (0 for an all-zero row).
float quantize_row(const float* x, int64_t n, float fixed, int8_t* q) {
  float scale = fixed;
  if (scale <= 0) {
    float amax = 0;
    for (int64_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(x[i]));
    scale = amax / 127.0f;
  }
  if (!(scale > 0) || !std::isfinite(scale)) {  // all zeros, or NaN / inf in the row
    std::fill_n(q, n, int8_t{0});
    return scale;
  }
  for (int64_t i = 0; i < n; ++i) q[i] = quantize_int8(x[i], scale);
  return scale;
}

}  // namespace

void fake_quantize_int8(float* x, int64_t n, float scale) {
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(quantize_int8(x[i], scale)) * scale;
}

KvCache::KvCache(std::vector<KvLayerSpec> layers, int64_t n_head_kv, int64_t head_dim,
                 ops::KvType type)
    : n_head_kv_(n_head_kv), head_dim_(head_dim), type_(type) {
  layers_.resize(layers.size());
  for (size_t i = 0; i < layers.size(); ++i) {
    Layer& l = layers_[i];
    l.spec = layers[i];
    AFM_CHECK(l.spec.capacity > 0);
    const size_t rows = static_cast<size_t>(n_head_kv * l.spec.capacity);
    l.k.resize(rows * row_bytes());
    l.v.resize(rows * row_bytes());
    if (type == ops::KvType::kQ8) {
      if (l.spec.k_scale <= 0) l.k_scales.resize(rows);
      if (l.spec.v_scale <= 0) l.v_scales.resize(rows);
    }
  }
}

KvCache::KvCache(int64_t n_layers, int64_t n_head_kv, int64_t head_dim, int64_t capacity,
                 ops::KvType type)
    : KvCache(std::vector<KvLayerSpec>(n_layers, KvLayerSpec{capacity}), n_head_kv, head_dim,
              type) {}

size_t KvCache::row_bytes() const { return static_cast<size_t>(head_dim_) * elem_bytes(type_); }

size_t KvCache::bytes() const {
  size_t total = 0;
  for (const Layer& l : layers_) {
    total += l.k.size() + l.v.size() + (l.k_scales.size() + l.v_scales.size()) * sizeof(float);
  }
  return total;
}

size_t KvCache::bytes_per_token() const {
  size_t total = 0;
  for (const Layer& l : layers_) {
    if (l.spec.ring) continue;
    total += 2 * n_head_kv_ * row_bytes();
    total += (l.k_scales.empty() ? 0 : n_head_kv_ * sizeof(float)) +
             (l.v_scales.empty() ? 0 : n_head_kv_ * sizeof(float));
  }
  return total;
}

void KvCache::write_row(Layer& l, bool is_k, int64_t head, int64_t slot, const float* x) {
  const size_t row = static_cast<size_t>(head * l.spec.capacity + slot);
  uint8_t* dst = (is_k ? l.k : l.v).data() + row * row_bytes();
  switch (type_) {
    case ops::KvType::kF32:
      std::memcpy(dst, x, head_dim_ * sizeof(float));
      return;
    case ops::KvType::kF16:
      cpu::best_vec_kernels().f32_to_f16(x, reinterpret_cast<uint16_t*>(dst), head_dim_);
      return;
    case ops::KvType::kQ8: {
      std::vector<float>& scales = is_k ? l.k_scales : l.v_scales;
      const float fixed = is_k ? l.spec.k_scale : l.spec.v_scale;
      const float s = quantize_row(x, head_dim_, fixed, reinterpret_cast<int8_t*>(dst));
      if (!scales.empty()) scales[row] = s;
      return;
    }
  }
}

void KvCache::write(int64_t layer, int64_t pos0, int64_t tokens, const float* k, const float* v) {
  AFM_CHECK(layer < n_layers());
  Layer& l = layers_[layer];
  AFM_CHECK(l.spec.ring ? tokens <= l.spec.capacity : pos0 + tokens <= l.spec.capacity);
  for (int64_t t = 0; t < tokens; ++t) {
    const int64_t slot = l.spec.ring ? (pos0 + t) % l.spec.capacity : pos0 + t;
    for (int64_t h = 0; h < n_head_kv_; ++h) {
      const int64_t offset = (t * n_head_kv_ + h) * head_dim_;
      write_row(l, true, h, slot, k + offset);
      write_row(l, false, h, slot, v + offset);
    }
  }
}

ops::KvLayerView KvCache::layer(int64_t index) const {
  const Layer& l = layers_[index];
  ops::KvLayerView view{type_, l.k.data(), l.v.data(), l.spec.capacity, l.spec.ring};
  view.k_scales = l.k_scales.empty() ? nullptr : l.k_scales.data();
  view.v_scales = l.v_scales.empty() ? nullptr : l.v_scales.data();
  view.k_uniform = l.spec.k_scale;
  view.v_uniform = l.spec.v_scale;
  return view;
}

}  // namespace afm::model
