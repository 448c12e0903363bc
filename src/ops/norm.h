// RMSNorm: y = x / sqrt(mean(x^2) + eps) * weight, over rows of n values (in place allowed).
#pragma once

#include <cstdint>

namespace afm::ops {

// x, y: (rows, n); weight: (n).
void rms_norm(const float* x, const float* weight, float eps, int64_t rows, int64_t n, float* y);

}  // namespace afm::ops
