// Built with -ffp-contract=off: ggml's oracle multiplies and subtracts in two roundings, which a
// fused multiply-add would change.
#include "quant/k_quants.h"

#include "base/half.h"

namespace afm::quant {

void unpack_scales_6bit(const uint8_t p[12], uint8_t scale[8], uint8_t min[8]) {
  for (int j = 0; j < 4; ++j) {
    scale[j] = p[j] & 0x3f;
    min[j] = p[j + 4] & 0x3f;
    scale[j + 4] = static_cast<uint8_t>((p[j + 8] & 0x0f) | ((p[j] >> 2) & 0x30));
    min[j + 4] = static_cast<uint8_t>((p[j + 8] >> 4) | ((p[j + 4] >> 2) & 0x30));
  }
}

void unpack_scales_q3_k(const uint8_t p[12], int8_t scale[16]) {
  for (int g = 0; g < 16; ++g) {
    const int low = (p[g % 8] >> (4 * (g / 8))) & 0x0f;
    const int high = (p[8 + g % 4] >> (2 * (g / 4))) & 0x03;
    scale[g] = static_cast<int8_t>((low | (high << 4)) - 32);
  }
}

void dequantize_row_q2_k(const BlockQ2_K* x, float* y, size_t n) {
  for (size_t b = 0; b < n / kSuperBlock; ++b) {
    const float d = f16_to_f32(x[b].d), dmin = f16_to_f32(x[b].dmin);
    for (int i = 0; i < 256; ++i) {
      const int h = i / 128, s = (i % 128) / 32, l = i % 32;
      const uint8_t sc = x[b].scales[i / 16];
      const float scale = d * static_cast<float>(sc & 0x0f);
      const float min = dmin * static_cast<float>(sc >> 4);
      const float product = scale * static_cast<float>((x[b].qs[32 * h + l] >> (2 * s)) & 3);
      *y++ = product - min;
    }
  }
}

void dequantize_row_q3_k(const BlockQ3_K* x, float* y, size_t n) {
  for (size_t b = 0; b < n / kSuperBlock; ++b) {
    const float d = f16_to_f32(x[b].d);
    int8_t scale[16];
    unpack_scales_q3_k(x[b].scales, scale);
    for (int i = 0; i < 256; ++i) {
      const int h = i / 128, s = (i % 128) / 32, l = i % 32;
      const int low = (x[b].qs[32 * h + l] >> (2 * s)) & 3;
      const int high = (x[b].hmask[l] >> (i / 32)) & 1;
      *y++ = (d * static_cast<float>(scale[i / 16])) * static_cast<float>(low - (high ? 0 : 4));
    }
  }
}

namespace {

// Q4_K and Q5_K: value i of sub-block j is d * scale_j * q - dmin * min_j.
template <class Block, class Q>
void dequantize_affine_k(const Block* x, float* y, size_t n, Q q_of) {
  for (size_t b = 0; b < n / kSuperBlock; ++b) {
    const float d = f16_to_f32(x[b].d), dmin = f16_to_f32(x[b].dmin);
    uint8_t scale[8], min[8];
    unpack_scales_6bit(x[b].scales, scale, min);
    for (int i = 0; i < 256; ++i) {
      const float product = (d * static_cast<float>(scale[i / 32])) * static_cast<float>(q_of(x[b], i));
      *y++ = product - dmin * static_cast<float>(min[i / 32]);
    }
  }
}

int q4_k_nibble(const uint8_t* qs, int i) { return (qs[32 * (i / 64) + i % 32] >> (4 * ((i / 32) % 2))) & 0x0f; }

}  // namespace

void dequantize_row_q4_k(const BlockQ4_K* x, float* y, size_t n) {
  dequantize_affine_k(x, y, n, [](const BlockQ4_K& blk, int i) { return q4_k_nibble(blk.qs, i); });
}

void dequantize_row_q5_k(const BlockQ5_K* x, float* y, size_t n) {
  dequantize_affine_k(x, y, n, [](const BlockQ5_K& blk, int i) {
    return q4_k_nibble(blk.qs, i) | (((blk.qh[i % 32] >> (i / 32)) & 1) << 4);
  });
}

void dequantize_row_q6_k(const BlockQ6_K* x, float* y, size_t n) {
  for (size_t b = 0; b < n / kSuperBlock; ++b) {
    const float d = f16_to_f32(x[b].d);
    for (int i = 0; i < 256; ++i) {
      const int h = i / 128, j = i % 128;
      const int low = (x[b].ql[64 * h + j % 64] >> (4 * (j / 64))) & 0x0f;
      const int high = (x[b].qh[32 * h + j % 32] >> (2 * (j / 32))) & 3;
      const int q = (low | (high << 4)) - 32;
      *y++ = (d * static_cast<float>(x[b].scales[i / 16])) * static_cast<float>(q);
    }
  }
}

}  // namespace afm::quant
