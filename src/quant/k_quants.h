// ggml's "K-quant" super-block formats, read-only: the block layouts and their dequantization,
// bit-identical to ggml (the `gguf` package's dequantize is the oracle, tests/quant). These are
// the types of the Q2_K / Q3_K_M / Q4_K_M / Q5_K_M / Q6_K files users download; afm runs them
// (backend/cpu/gemm_kquant_*.cpp) but does not write them.
//
// Every super-block holds 256 values in sub-blocks of 32 (Q4_K, Q5_K) or 16 (Q2_K, Q3_K,
// Q6_K), each with its own scale, built from one or two f16 super-block scales:
//   Q2_K: x = d * (sc & 15) * q - dmin * (sc >> 4),  q in 0..3, 16 groups of 16
//   Q3_K: x = d * (sc6 - 32) * (q - 4 * !hbit),       q in 0..3 plus a high bit, 16 groups
//   Q4_K: x = d * sc6 * q - dmin * m6,                q in 0..15, 8 groups of 32
//   Q5_K: x = d * sc6 * q - dmin * m6,                q in 0..31 (4 bits + a high bit)
//   Q6_K: x = d * sc8 * (q - 32),                     q in 0..63, 16 groups of 16, int8 scales
// (sc6 / m6: 6-bit values packed into 12 bytes, unpack_scales_6bit). Where each value's bits
// sit inside the block is spelled out next to each struct. Functions never allocate or throw;
// n must be a multiple of 256.
#pragma once

#include <cstddef>
#include <cstdint>

namespace afm::quant {

inline constexpr size_t kSuperBlock = 256;

// qs[32 * h + l], h = 0..1, bits 2s..2s+1: value 128 h + 32 s + l. scales[g]: group g of 16.
struct BlockQ2_K {
  uint8_t scales[16];  // low nibble: scale, high nibble: min
  uint8_t qs[64];
  uint16_t d, dmin;  // f16
};
static_assert(sizeof(BlockQ2_K) == 84);

// Low two bits as Q2_K's qs; the third bit of value 32 i + l is bit i of hmask[l] (set: q,
// clear: q - 4). scales: sixteen 6-bit values (unpack_scales_q3_k), stored plus 32.
struct BlockQ3_K {
  uint8_t hmask[32];
  uint8_t qs[64];
  uint8_t scales[12];
  uint16_t d;  // f16
};
static_assert(sizeof(BlockQ3_K) == 110);

// qs[32 c + l]: low nibble value 64 c + l, high nibble value 64 c + 32 + l (sub-blocks 2c and
// 2c + 1). scales: eight 6-bit scales and eight 6-bit mins (unpack_scales_6bit).
struct BlockQ4_K {
  uint16_t d, dmin;  // f16
  uint8_t scales[12];
  uint8_t qs[128];
};
static_assert(sizeof(BlockQ4_K) == 144);

// Q4_K's nibbles plus a fifth bit: bit i of qh[l] is bit 4 of value 32 i + l.
struct BlockQ5_K {
  uint16_t d, dmin;  // f16
  uint8_t scales[12];
  uint8_t qh[32];
  uint8_t qs[128];
};
static_assert(sizeof(BlockQ5_K) == 176);

// In half h (values 128 h ..): ql[64 h + l] low nibble is value 128 h + l, high nibble value
// 128 h + 64 + l (l < 64); qh[32 h + l] bits 2s..2s+1 are bits 4-5 of value 128 h + 32 s + l.
// scales[g] (int8) for group g of 16.
struct BlockQ6_K {
  uint8_t ql[128];
  uint8_t qh[64];
  int8_t scales[16];
  uint16_t d;  // f16
};
static_assert(sizeof(BlockQ6_K) == 210);

// Q4_K / Q5_K: the twelve scale bytes -> eight 6-bit scales and eight 6-bit mins.
void unpack_scales_6bit(const uint8_t packed[12], uint8_t scale[8], uint8_t min[8]);
// Q3_K: the twelve scale bytes -> sixteen signed scales (the stored value minus 32).
void unpack_scales_q3_k(const uint8_t packed[12], int8_t scale[16]);

void dequantize_row_q2_k(const BlockQ2_K* x, float* y, size_t n);
void dequantize_row_q3_k(const BlockQ3_K* x, float* y, size_t n);
void dequantize_row_q4_k(const BlockQ4_K* x, float* y, size_t n);
void dequantize_row_q5_k(const BlockQ5_K* x, float* y, size_t n);
void dequantize_row_q6_k(const BlockQ6_K* x, float* y, size_t n);

}  // namespace afm::quant
