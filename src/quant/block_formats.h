// ggml's Q8_0 and Q4_0 block formats and their reference (scalar) quantizers.
//
// Q8_0: 32 values -> f16 scale d + 32 x int8 q; x = q * d.
// Q4_0: 32 values -> f16 scale d + 16 bytes; byte j holds q[j] (low nibble) and q[j + 16]
//       (high nibble); x = (q - 8) * d.
// Read only (afm runs files that have them, does not write them):
// Q4_1: Q4_0's nibbles with an f16 offset m: x = d * q + m.
// Q5_0 / Q5_1: a fifth bit per value, bit j of the little-endian u32 qh for value j:
//       x = d * (q - 16), and x = d * q + m.
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

struct BlockQ4_1 {
  uint16_t d, m;  // f16 scale and offset
  uint8_t qs[16];
};
static_assert(sizeof(BlockQ4_1) == 20);

struct BlockQ5_0 {
  uint16_t d;  // f16 scale
  uint8_t qh[4];
  uint8_t qs[16];
};
static_assert(sizeof(BlockQ5_0) == 22);

struct BlockQ5_1 {
  uint16_t d, m;  // f16 scale and offset
  uint8_t qh[4];
  uint8_t qs[16];
};
static_assert(sizeof(BlockQ5_1) == 24);

// Value j (0..31) of a 4- or 5-bit block, before scale and offset.
inline int nibble_at(const uint8_t qs[16], int j) { return (qs[j % 16] >> (4 * (j / 16))) & 0x0f; }
inline int fifth_bit_at(const uint8_t qh[4], int j) { return (qh[j / 8] >> (j % 8)) & 1; }

void quantize_row_q8_0(const float* x, BlockQ8_0* y, size_t n);  // x: (n), y: (n / 32)
void dequantize_row_q8_0(const BlockQ8_0* x, float* y, size_t n);
void quantize_row_q4_0(const float* x, BlockQ4_0* y, size_t n);
void dequantize_row_q4_0(const BlockQ4_0* x, float* y, size_t n);
void dequantize_row_q4_1(const BlockQ4_1* x, float* y, size_t n);
void dequantize_row_q5_0(const BlockQ5_0* x, float* y, size_t n);
void dequantize_row_q5_1(const BlockQ5_1* x, float* y, size_t n);

// Plain float rows (round-to-nearest-even).
void convert_row_f32_to_f16(const float* x, uint16_t* y, size_t n);
void convert_row_f32_to_bf16(const float* x, uint16_t* y, size_t n);

}  // namespace afm::quant
