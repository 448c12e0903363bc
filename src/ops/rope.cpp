#include "ops/rope.h"

#include <cmath>

namespace afm::ops {

Rope::Rope(RopeLayout layout, int64_t dims, float theta, float freq_scale)
    : layout_(layout), dims_(dims), inv_freq_(dims / 2) {
  for (int64_t i = 0; i < dims / 2; ++i) {
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(dims);
    inv_freq_[i] = 1.0f / std::pow(theta, exponent) * freq_scale;
  }
}

void Rope::apply(float* x, int64_t tokens, int64_t n_heads, int64_t head_dim,
                 const int32_t* positions) const {
  const int64_t half = dims_ / 2;
  std::vector<float> cos_sin(2 * half);
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t i = 0; i < half; ++i) {
      const float angle = static_cast<float>(positions[t]) * inv_freq_[i];
      cos_sin[2 * i] = std::cos(angle);
      cos_sin[2 * i + 1] = std::sin(angle);
    }
    for (int64_t h = 0; h < n_heads; ++h) {
      float* v = x + (t * n_heads + h) * head_dim;
      for (int64_t i = 0; i < half; ++i) {
        const int64_t a = layout_ == RopeLayout::kAdjacent ? 2 * i : i;
        const int64_t b = layout_ == RopeLayout::kAdjacent ? 2 * i + 1 : i + half;
        const float c = cos_sin[2 * i], s = cos_sin[2 * i + 1];
        const float x0 = v[a], x1 = v[b];
        v[a] = x0 * c - x1 * s;
        v[b] = x1 * c + x0 * s;
      }
    }
  }
}

}  // namespace afm::ops
