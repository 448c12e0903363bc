// The balanced 2-bit block format of the tech report's on-device compression (section 6):
// four levels {-1.5, -0.5, 0.5, 1.5} x scale, no zero level (docs/gguf.md, "q2_b").
//
// Block: 128 values in 34 bytes (2.125 bits per weight):
//   uint16 d        f16 scale
//   uint8  qs[32]   byte j holds the codes of elements j, j + 32, j + 64, j + 96 in bits
//                   0-1, 2-3, 4-5, 6-7, so one 32-byte load and three shifts give the codes of
//                   four runs of 32 consecutive elements (what the SIMD kernels want)
// x = d * (q - 1.5), q in 0..3.
//
// A block's dot product with activations a is d * (sum q_i a_i - 1.5 * sum a_i): integer codes
// times activations, one correction per block (the kernels' identity).
//
// This file is the scalar reference (the oracle of future kernels): quantize with a given
// clipping factor f (the report's learnable per-tensor factor: d = f * max|x| / 1.5 over the
// block), or let the quantizer pick f per block from a fixed grid by least squared error (the
// PTQ baseline). Functions never allocate or throw; n must be a multiple of 128.
#pragma once

#include <cstddef>
#include <cstdint>

namespace afm::quant {

inline constexpr size_t kQ2BBlockElements = 128;

struct BlockQ2B {
  uint16_t d;  // f16 scale
  uint8_t qs[32];
};
static_assert(sizeof(BlockQ2B) == 34);

// The code of x for scale d: the nearest level, thresholds at -d, 0 and d (ties go up).
uint8_t q2b_code(float x, float d);

// Quantizes with d = f * max|x| / 1.5 per block (f in (0, 1]; 1 keeps the largest value
// representable, smaller f clips it to gain resolution for the rest).
void quantize_row_q2b(const float* x, BlockQ2B* y, size_t n, float f);
// Picks f per block from kQ2BClipGrid by the least squared error of the decoded block.
void quantize_row_q2b_search(const float* x, BlockQ2B* y, size_t n);
void dequantize_row_q2b(const BlockQ2B* x, float* y, size_t n);

// The clipping factors quantize_row_q2b_search tries, largest first.
inline constexpr float kQ2BClipGrid[] = {1.0f,  0.95f, 0.9f,  0.85f, 0.8f,  0.75f, 0.7f,
                                         0.65f, 0.6f,  0.55f, 0.5f,  0.45f, 0.4f};

}  // namespace afm::quant
