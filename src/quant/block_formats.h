// ggml's Q8_0 and Q4_0 block formats and their reference (scalar) quantizers.
//
// Q8_0: 32 values -> f16 scale d + 32 x int8 q; x = q * d.
// Q4_0: 32 values -> f16 scale d + 16 bytes; byte j holds q[j] (low nibble) and q[j + 16]
//       (high nibble); x = (q - 8) * d.
// The quantizers reproduce ggml's reference C code bit for bit (llama.cpp's converter and
// llama-quantize produce the same bytes), so files we write compare byte-equal. They are the
// oracle for future SIMD versions. Functions never allocate or throw; n must be a multiple of 32.
#pragma once

#include <cstddef>
#include <cstdint>

namespace afm::quant {

inline constexpr size_t kBlockElements = 32;

struct BlockQ8_0 {
  uint16_t d;  // f16 scale
  int8_t q[32];
};
static_assert(sizeof(BlockQ8_0) == 34);

struct BlockQ4_0 {
  uint16_t d;  // f16 scale
  uint8_t qs[16];
};
static_assert(sizeof(BlockQ4_0) == 18);

void quantize_row_q8_0(const float* x, BlockQ8_0* y, size_t n);  // x: (n), y: (n / 32)
void dequantize_row_q8_0(const BlockQ8_0* x, float* y, size_t n);
void quantize_row_q4_0(const float* x, BlockQ4_0* y, size_t n);
void dequantize_row_q4_0(const BlockQ4_0* x, float* y, size_t n);

// Plain float rows (round-to-nearest-even).
void convert_row_f32_to_f16(const float* x, uint16_t* y, size_t n);
void convert_row_f32_to_bf16(const float* x, uint16_t* y, size_t n);

}  // namespace afm::quant
