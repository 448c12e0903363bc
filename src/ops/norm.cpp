#include "ops/norm.h"

#include <cmath>

namespace afm::ops {

void rms_norm(const float* x, const float* weight, float eps, int64_t rows, int64_t n, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    double ss = 0;
    for (int64_t i = 0; i < n; ++i) ss += static_cast<double>(xr[i]) * xr[i];
    const float scale = 1.0f / std::sqrt(static_cast<float>(ss / n) + eps);
    for (int64_t i = 0; i < n; ++i) yr[i] = xr[i] * scale * weight[i];
  }
}

}  // namespace afm::ops
