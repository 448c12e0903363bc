// Reference kernels for ggml's read-only block types: each 32-value stretch of a weight row is
// decoded to integer codes q and, per group of 16, a scale A and an offset B such that the
// weight is A * q - B (quant/k_quants.h gives each type's A, B and q). Against one activation
// block (d_a, int8 a[32]) the dot product is then exact integer sums and a few floats:
//   d_a * sum over its two groups g of (A_g * sum q a - B_g * sum a).
// The SIMD kernels (gemm_ggml_avx512.cpp) compute the same integer sums; only the order of the
// float additions differs.
#include "backend/cpu/gemm.h"
#include "base/half.h"
#include "quant/block_formats.h"
#include "quant/k_quants.h"

namespace afm::cpu {
namespace {

struct Stretch {
  int q[32];
  float scale[2], offset[2];  // A and B of values 0-15 and 16-31
};

void set_groups(Stretch& s, float a0, float b0, float a1, float b1) {
  s.scale[0] = a0, s.offset[0] = b0, s.scale[1] = a1, s.offset[1] = b1;
}

// Stretch j of a row (values 32 j .. 32 j + 31), one decoder per type.
void decode_q4_1(const uint8_t* row, int64_t j, Stretch& s) {
  const auto& b = reinterpret_cast<const quant::BlockQ4_1*>(row)[j];
  for (int i = 0; i < 32; ++i) s.q[i] = quant::nibble_at(b.qs, i);
  const float d = f16_to_f32(b.d), m = f16_to_f32(b.m);
  set_groups(s, d, -m, d, -m);
}

void decode_q5_0(const uint8_t* row, int64_t j, Stretch& s) {
  const auto& b = reinterpret_cast<const quant::BlockQ5_0*>(row)[j];
  for (int i = 0; i < 32; ++i) s.q[i] = (quant::nibble_at(b.qs, i) | (quant::fifth_bit_at(b.qh, i) << 4)) - 16;
  const float d = f16_to_f32(b.d);
  set_groups(s, d, 0, d, 0);
}

void decode_q5_1(const uint8_t* row, int64_t j, Stretch& s) {
  const auto& b = reinterpret_cast<const quant::BlockQ5_1*>(row)[j];
  for (int i = 0; i < 32; ++i) s.q[i] = quant::nibble_at(b.qs, i) | (quant::fifth_bit_at(b.qh, i) << 4);
  const float d = f16_to_f32(b.d), m = f16_to_f32(b.m);
  set_groups(s, d, -m, d, -m);
}

void decode_q2_k(const uint8_t* row, int64_t j, Stretch& s) {
  const auto& b = reinterpret_cast<const quant::BlockQ2_K*>(row)[j / 8];
  const int part = static_cast<int>(j % 8), h = part / 4, shift = 2 * (part % 4);
  for (int i = 0; i < 32; ++i) s.q[i] = (b.qs[32 * h + i] >> shift) & 3;
  const float d = f16_to_f32(b.d), dmin = f16_to_f32(b.dmin);
  const uint8_t lo = b.scales[2 * part], hi = b.scales[2 * part + 1];
  set_groups(s, d * static_cast<float>(lo & 15), dmin * static_cast<float>(lo >> 4),
             d * static_cast<float>(hi & 15), dmin * static_cast<float>(hi >> 4));
}

void decode_q3_k(const uint8_t* row, int64_t j, Stretch& s) {
  const auto& b = reinterpret_cast<const quant::BlockQ3_K*>(row)[j / 8];
  const int part = static_cast<int>(j % 8), h = part / 4, shift = 2 * (part % 4);
  for (int i = 0; i < 32; ++i) {
    s.q[i] = ((b.qs[32 * h + i] >> shift) & 3) - (((b.hmask[i] >> part) & 1) ? 0 : 4);
  }
  int8_t sc[16];
  quant::unpack_scales_q3_k(b.scales, sc);
  const float d = f16_to_f32(b.d);
  set_groups(s, d * sc[2 * part], 0, d * sc[2 * part + 1], 0);
}

template <class Block>
void decode_affine_k(const Block& b, int part, Stretch& s) {
  uint8_t sc[8], m[8];
  quant::unpack_scales_6bit(b.scales, sc, m);
  const float a = f16_to_f32(b.d) * sc[part], off = f16_to_f32(b.dmin) * m[part];
  set_groups(s, a, off, a, off);
}

void decode_q4_k(const uint8_t* row, int64_t j, Stretch& s) {
  const auto& b = reinterpret_cast<const quant::BlockQ4_K*>(row)[j / 8];
  const int part = static_cast<int>(j % 8);
  for (int i = 0; i < 32; ++i) s.q[i] = (b.qs[32 * (part / 2) + i] >> (4 * (part % 2))) & 15;
  decode_affine_k(b, part, s);
}

void decode_q5_k(const uint8_t* row, int64_t j, Stretch& s) {
  const auto& b = reinterpret_cast<const quant::BlockQ5_K*>(row)[j / 8];
  const int part = static_cast<int>(j % 8);
  for (int i = 0; i < 32; ++i) {
    s.q[i] = ((b.qs[32 * (part / 2) + i] >> (4 * (part % 2))) & 15) | (((b.qh[i] >> part) & 1) << 4);
  }
  decode_affine_k(b, part, s);
}

void decode_q6_k(const uint8_t* row, int64_t j, Stretch& s) {
  const auto& b = reinterpret_cast<const quant::BlockQ6_K*>(row)[j / 8];
  const int part = static_cast<int>(j % 8), h = part / 4, quarter = part % 4;
  for (int i = 0; i < 32; ++i) {
    const int v = 32 * quarter + i;  // within the half
    const int low = (b.ql[64 * h + v % 64] >> (4 * (v / 64))) & 15;
    const int high = (b.qh[32 * h + i] >> (2 * quarter)) & 3;
    s.q[i] = (low | (high << 4)) - 32;
  }
  const float d = f16_to_f32(b.d);
  set_groups(s, d * b.scales[2 * part], 0, d * b.scales[2 * part + 1], 0);
}

template <void (*Decode)(const uint8_t*, int64_t, Stretch&)>
void gemm_stretches(const void* w, size_t w_row_bytes, int64_t n_rows, const void* x,
                    size_t x_row_bytes, int64_t n_tok, int64_t k, float* y, int64_t y_stride) {
  Stretch s;
  for (int64_t t = 0; t < n_tok; ++t) {
    const auto* xr = reinterpret_cast<const ActBlock*>(static_cast<const uint8_t*>(x) + t * x_row_bytes);
    for (int64_t r = 0; r < n_rows; ++r) {
      const uint8_t* wr = static_cast<const uint8_t*>(w) + r * w_row_bytes;
      float sum = 0;
      for (int64_t j = 0; j < k / 32; ++j) {
        Decode(wr, j, s);
        float block = 0;
        for (int g = 0; g < 2; ++g) {
          int32_t dot = 0, act = 0;
          for (int i = 16 * g; i < 16 * g + 16; ++i) dot += s.q[i] * xr[j].q[i], act += xr[j].q[i];
          block += s.scale[g] * static_cast<float>(dot) - s.offset[g] * static_cast<float>(act);
        }
        sum += xr[j].d * block;
      }
      y[t * y_stride + r] = sum;
    }
  }
}

// Against ActBlock256 rows: a super-block's weights as integers, value i of group g (16
// values) = d * scale[g] * q[i] - dmin * min[g], so that its dot product with one activation
// block (d_a, a[256], sums of each 16) is
//   d_a * (d * sum_g scale[g] * sum_{i in g} q a  -  dmin * sum_g min[g] * sums[g]),
// two exact integer sums (|each| < 2^31 for every type) and a few floats.
struct SuperBlock {
  int q[256];
  int scale[16], min[16];
  float d, dmin;
};

void super_q2_k(const uint8_t* row, int64_t sb, SuperBlock& s) {
  const auto& b = reinterpret_cast<const quant::BlockQ2_K*>(row)[sb];
  for (int i = 0; i < 256; ++i) s.q[i] = (b.qs[32 * (i / 128) + i % 32] >> (2 * ((i / 32) % 4))) & 3;
  for (int g = 0; g < 16; ++g) s.scale[g] = b.scales[g] & 15, s.min[g] = b.scales[g] >> 4;
  s.d = f16_to_f32(b.d), s.dmin = f16_to_f32(b.dmin);
}

void super_q3_k(const uint8_t* row, int64_t sb, SuperBlock& s) {
  const auto& b = reinterpret_cast<const quant::BlockQ3_K*>(row)[sb];
  for (int i = 0; i < 256; ++i) {
    const int part = i / 32, l = i % 32;
    s.q[i] = ((b.qs[32 * (part / 4) + l] >> (2 * (part % 4))) & 3) - (((b.hmask[l] >> part) & 1) ? 0 : 4);
  }
  int8_t sc[16];
  quant::unpack_scales_q3_k(b.scales, sc);
  for (int g = 0; g < 16; ++g) s.scale[g] = sc[g], s.min[g] = 0;
  s.d = f16_to_f32(b.d), s.dmin = 0;
}

template <class Block>
void super_affine_scales(const Block& b, SuperBlock& s) {
  uint8_t sc[8], m[8];
  quant::unpack_scales_6bit(b.scales, sc, m);
  for (int g = 0; g < 16; ++g) s.scale[g] = sc[g / 2], s.min[g] = m[g / 2];
  s.d = f16_to_f32(b.d), s.dmin = f16_to_f32(b.dmin);
}

void super_q4_k(const uint8_t* row, int64_t sb, SuperBlock& s) {
  const auto& b = reinterpret_cast<const quant::BlockQ4_K*>(row)[sb];
  for (int i = 0; i < 256; ++i) s.q[i] = (b.qs[32 * (i / 64) + i % 32] >> (4 * ((i / 32) % 2))) & 15;
  super_affine_scales(b, s);
}

void super_q5_k(const uint8_t* row, int64_t sb, SuperBlock& s) {
  const auto& b = reinterpret_cast<const quant::BlockQ5_K*>(row)[sb];
  for (int i = 0; i < 256; ++i) {
    const int part = i / 32, l = i % 32;
    s.q[i] = ((b.qs[32 * (part / 2) + l] >> (4 * (part % 2))) & 15) | (((b.qh[l] >> part) & 1) << 4);
  }
  super_affine_scales(b, s);
}

void super_q6_k(const uint8_t* row, int64_t sb, SuperBlock& s) {
  const auto& b = reinterpret_cast<const quant::BlockQ6_K*>(row)[sb];
  for (int i = 0; i < 256; ++i) {
    const int h = i / 128, v = i % 128, quarter = v / 32;
    const int low = (b.ql[64 * h + v % 64] >> (4 * (v / 64))) & 15;
    const int high = (b.qh[32 * h + v % 32] >> (2 * quarter)) & 3;
    s.q[i] = (low | (high << 4)) - 32;
  }
  for (int g = 0; g < 16; ++g) s.scale[g] = b.scales[g], s.min[g] = 0;
  s.d = f16_to_f32(b.d), s.dmin = 0;
}

template <void (*Decode)(const uint8_t*, int64_t, SuperBlock&)>
void gemm_super_blocks(const void* w, size_t w_row_bytes, int64_t n_rows, const void* x,
                       size_t x_row_bytes, int64_t n_tok, int64_t k, float* y, int64_t y_stride) {
  SuperBlock s;
  for (int64_t t = 0; t < n_tok; ++t) {
    const auto* xr = reinterpret_cast<const ActBlock256*>(static_cast<const uint8_t*>(x) + t * x_row_bytes);
    for (int64_t r = 0; r < n_rows; ++r) {
      const uint8_t* wr = static_cast<const uint8_t*>(w) + r * w_row_bytes;
      float sum = 0;
      for (int64_t sb = 0; sb < k / 256; ++sb) {
        Decode(wr, sb, s);
        int32_t scaled = 0, offsets = 0;
        for (int g = 0; g < 16; ++g) {
          int32_t dot = 0;
          for (int i = 16 * g; i < 16 * g + 16; ++i) dot += s.q[i] * xr[sb].q[i];
          scaled += s.scale[g] * dot;
          offsets += s.min[g] * xr[sb].sums[g];
        }
        sum += xr[sb].d * (s.d * static_cast<float>(scaled) - s.dmin * static_cast<float>(offsets));
      }
      y[t * y_stride + r] = sum;
    }
  }
}

}  // namespace

const GgmlBlockKernels& scalar_ggml_super_block_kernels() {
  const GgmlBlockKernels& s = scalar_ggml_block_kernels();
  static const GgmlBlockKernels kernels{
      s.q4_1, s.q5_0, s.q5_1, gemm_super_blocks<super_q2_k>, gemm_super_blocks<super_q3_k>,
      gemm_super_blocks<super_q4_k>, gemm_super_blocks<super_q5_k>, gemm_super_blocks<super_q6_k>,
      true};
  return kernels;
}

const GgmlBlockKernels& scalar_ggml_block_kernels() {
  static const GgmlBlockKernels kernels{
      gemm_stretches<decode_q4_1>, gemm_stretches<decode_q5_0>, gemm_stretches<decode_q5_1>,
      gemm_stretches<decode_q2_k>, gemm_stretches<decode_q3_k>, gemm_stretches<decode_q4_k>,
      gemm_stretches<decode_q5_k>, gemm_stretches<decode_q6_k>};
  return kernels;
}

}  // namespace afm::cpu
