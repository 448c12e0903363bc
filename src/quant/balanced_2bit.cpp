#include "quant/balanced_2bit.h"

#include <algorithm>
#include <cmath>

#include "base/half.h"

namespace afm::quant {
namespace {

constexpr size_t kRun = 32;  // elements per code plane of a block

float block_absmax(const float* x) {
  float m = 0;
  for (size_t i = 0; i < kQ2BBlockElements; ++i) m = std::max(m, std::fabs(x[i]));
  return m;
}

// One block with the scale d (already rounded to f16 by the caller).
void encode_block(const float* x, uint16_t d_half, BlockQ2B& y) {
  const float d = f16_to_f32(d_half);
  y.d = d_half;
  for (size_t j = 0; j < kRun; ++j) {
    uint8_t byte = 0;
    for (size_t plane = 0; plane < 4; ++plane) {
      byte |= static_cast<uint8_t>(q2b_code(x[plane * kRun + j], d) << (2 * plane));
    }
    y.qs[j] = byte;
  }
}

float block_squared_error(const float* x, const BlockQ2B& y) {
  float decoded[kQ2BBlockElements];
  dequantize_row_q2b(&y, decoded, kQ2BBlockElements);
  float e = 0;
  for (size_t i = 0; i < kQ2BBlockElements; ++i) e += (x[i] - decoded[i]) * (x[i] - decoded[i]);
  return e;
}

}  // namespace

uint8_t q2b_code(float x, float d) {
  if (!(d > 0)) return 2;  // an all-zero block decodes to 0.5 * 0 = 0 whatever the codes
  const float t = std::floor(x / d) + 2;
  if (std::isnan(t)) return 2;  // a NaN weight decodes to +0.5 d instead of poisoning the cast
  return static_cast<uint8_t>(std::clamp(t, 0.0f, 3.0f));
}

void quantize_row_q2b(const float* x, BlockQ2B* y, size_t n, float f) {
  for (size_t b = 0; b < n / kQ2BBlockElements; ++b) {
    const float* xb = x + b * kQ2BBlockElements;
    encode_block(xb, f32_to_f16(f * block_absmax(xb) / 1.5f), y[b]);
  }
}

void quantize_row_q2b_search(const float* x, BlockQ2B* y, size_t n) {
  for (size_t b = 0; b < n / kQ2BBlockElements; ++b) {
    const float* xb = x + b * kQ2BBlockElements;
    const float absmax = block_absmax(xb);
    BlockQ2B candidate;
    float best = INFINITY;
    for (float f : kQ2BClipGrid) {  // the first of equal errors wins: the largest f
      encode_block(xb, f32_to_f16(f * absmax / 1.5f), candidate);
      const float e = block_squared_error(xb, candidate);
      if (e < best) best = e, y[b] = candidate;
    }
  }
}

void dequantize_row_q2b(const BlockQ2B* x, float* y, size_t n) {
  for (size_t b = 0; b < n / kQ2BBlockElements; ++b) {
    const float d = f16_to_f32(x[b].d);
    float* yb = y + b * kQ2BBlockElements;
    for (size_t j = 0; j < kRun; ++j) {
      for (size_t plane = 0; plane < 4; ++plane) {
        const int q = (x[b].qs[j] >> (2 * plane)) & 3;
        yb[plane * kRun + j] = d * (static_cast<float>(q) - 1.5f);
      }
    }
  }
}

}  // namespace afm::quant
