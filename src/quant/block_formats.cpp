#include "quant/block_formats.h"

#include <algorithm>
#include <cmath>

#include "base/half.h"

namespace afm::quant {

void quantize_row_q8_0(const float* x, BlockQ8_0* y, size_t n) {
  for (size_t b = 0; b < n / kBlockElements; ++b, x += kBlockElements) {
    float amax = 0.0f;
    for (size_t j = 0; j < kBlockElements; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    float id = d != 0.0f ? 1.0f / d : 0.0f;
    if (!std::isfinite(id)) id = 0.0f;  // a subnormal scale: 1/d overflows; the block is ~0
    y[b].d = f32_to_f16(d);
    for (size_t j = 0; j < kBlockElements; ++j) {
      y[b].q[j] = static_cast<int8_t>(std::roundf(x[j] * id));  // ties away from zero, as ggml
    }
  }
}

void dequantize_row_q8_0(const BlockQ8_0* x, float* y, size_t n) {
  for (size_t b = 0; b < n / kBlockElements; ++b) {
    const float d = f16_to_f32(x[b].d);
    for (size_t j = 0; j < kBlockElements; ++j) *y++ = static_cast<float>(x[b].q[j]) * d;
  }
}

void quantize_row_q4_0(const float* x, BlockQ4_0* y, size_t n) {
  constexpr size_t kHalf = kBlockElements / 2;
  for (size_t b = 0; b < n / kBlockElements; ++b, x += kBlockElements) {
    // The scale maps the value of largest magnitude, with its sign, to -8.
    float amax = 0.0f, max = 0.0f;
    for (size_t j = 0; j < kBlockElements; ++j) {
      if (amax < std::fabs(x[j])) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    }
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = f32_to_f16(d);
    for (size_t j = 0; j < kHalf; ++j) {
      // Truncation after +8.5 is ggml's rounding; keep it for byte-identical files.
      const int lo = std::min(15, static_cast<int>(static_cast<int8_t>(x[j] * id + 8.5f)));
      const int hi = std::min(15, static_cast<int>(static_cast<int8_t>(x[kHalf + j] * id + 8.5f)));
      y[b].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

void dequantize_row_q4_0(const BlockQ4_0* x, float* y, size_t n) {
  constexpr size_t kHalf = kBlockElements / 2;
  for (size_t b = 0; b < n / kBlockElements; ++b, y += kBlockElements) {
    const float d = f16_to_f32(x[b].d);
    for (size_t j = 0; j < kHalf; ++j) {
      y[j] = static_cast<float>((x[b].qs[j] & 0x0f) - 8) * d;
      y[kHalf + j] = static_cast<float>((x[b].qs[j] >> 4) - 8) * d;
    }
  }
}

void dequantize_row_q4_1(const BlockQ4_1* x, float* y, size_t n) {
  for (size_t b = 0; b < n / kBlockElements; ++b) {
    const float d = f16_to_f32(x[b].d), m = f16_to_f32(x[b].m);
    for (int j = 0; j < 32; ++j) {
      const float product = d * static_cast<float>(nibble_at(x[b].qs, j));
      *y++ = product + m;  // two roundings, as ggml's oracle (no fused multiply-add)
    }
  }
}

void dequantize_row_q5_0(const BlockQ5_0* x, float* y, size_t n) {
  for (size_t b = 0; b < n / kBlockElements; ++b) {
    const float d = f16_to_f32(x[b].d);
    for (int j = 0; j < 32; ++j) {
      const int q = nibble_at(x[b].qs, j) | (fifth_bit_at(x[b].qh, j) << 4);
      *y++ = d * static_cast<float>(q - 16);
    }
  }
}

void dequantize_row_q5_1(const BlockQ5_1* x, float* y, size_t n) {
  for (size_t b = 0; b < n / kBlockElements; ++b) {
    const float d = f16_to_f32(x[b].d), m = f16_to_f32(x[b].m);
    for (int j = 0; j < 32; ++j) {
      const int q = nibble_at(x[b].qs, j) | (fifth_bit_at(x[b].qh, j) << 4);
      const float product = d * static_cast<float>(q);
      *y++ = product + m;
    }
  }
}

void convert_row_f32_to_f16(const float* x, uint16_t* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = f32_to_f16(x[i]);
}

void convert_row_f32_to_bf16(const float* x, uint16_t* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = f32_to_bf16(x[i]);
}

}  // namespace afm::quant
