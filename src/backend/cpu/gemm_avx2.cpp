// AVX2 + FMA + F16C kernels, for CPUs without AVX-512. Same tiling as gemm_avx512.cpp (see
// there); compiled with these flags for this file only, so helpers stay file-local.
// Without VNNI the byte dot products use vpmaddubsw (u8 x s8 -> s16 pairs) then vpmaddwd.
#include "backend/cpu/gemm.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "quant/balanced_2bit.h"
#include "quant/block_formats.h"

namespace afm::cpu {
namespace {

#include "backend/cpu/avx2_helpers.inc"

struct LoadF32 {
  static __m256 load(const uint8_t* row, int64_t i) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(row) + i);
  }
  static float at(const uint8_t* row, int64_t i) { return reinterpret_cast<const float*>(row)[i]; }
};

struct LoadF16 {
  static __m256 load(const uint8_t* row, int64_t i) {
    return _mm256_cvtph_ps(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(reinterpret_cast<const uint16_t*>(row) + i)));
  }
  static float at(const uint8_t* row, int64_t i) {
    return _cvtsh_ss(reinterpret_cast<const uint16_t*>(row)[i]);
  }
};

struct LoadBF16 {
  static __m256 load(const uint8_t* row, int64_t i) {
    const __m128i h =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(reinterpret_cast<const uint16_t*>(row) + i));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  static float at(const uint8_t* row, int64_t i) {
    const uint32_t u = static_cast<uint32_t>(reinterpret_cast<const uint16_t*>(row)[i]) << 16;
    return _mm_cvtss_f32(_mm_castsi128_ps(_mm_cvtsi32_si128(static_cast<int>(u))));
  }
};

template <class Load, int R, int C>
inline void float_tile(const uint8_t* w, size_t wrb, const uint8_t* x, size_t xrb, int64_t k,
                       float* y, int64_t ys) {
  __m256 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= k; i += 8) {
    __m256 wv[R];
    for (int r = 0; r < R; ++r) wv[r] = Load::load(w + r * wrb, i);
    for (int c = 0; c < C; ++c) {
      const __m256 xv = _mm256_loadu_ps(reinterpret_cast<const float*>(x + c * xrb) + i);
      for (int r = 0; r < R; ++r) acc[r][c] = _mm256_fmadd_ps(wv[r], xv, acc[r][c]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) {
      float s = hsum256(acc[r][c]);
      const auto* xr = reinterpret_cast<const float*>(x + c * xrb);
      for (int64_t j = i; j < k; ++j) s += Load::at(w + r * wrb, j) * xr[j];
      y[c * ys + r] = s;
    }
  }
}

template <int R, int C>
inline void q4_tile(const uint8_t* w, size_t wrb, const uint8_t* x, size_t xrb, int64_t nb,
                    float* y, int64_t ys) {
  __m256 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  const __m128i low_mask = _mm_set1_epi8(0x0f);
  for (int64_t b = 0; b < nb; ++b) {
    __m256i wq[R];
    float dw[R];
    for (int r = 0; r < R; ++r) {
      const auto* blk = reinterpret_cast<const quant::BlockQ4_0*>(w + r * wrb) + b;
      const __m128i qs = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk->qs));
      wq[r] = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(qs, 4), low_mask),
                               _mm_and_si128(qs, low_mask));
      dw[r] = _cvtsh_ss(blk->d);
    }
    for (int c = 0; c < C; ++c) {
      const auto* a = reinterpret_cast<const ActBlock*>(x + c * xrb) + b;
      const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a->q));
      const __m256i bias = _mm256_zextsi128_si256(_mm_cvtsi32_si128(-8 * a->sum));
      for (int r = 0; r < R; ++r) {
        const __m256i s = _mm256_add_epi32(bias, dot_u8_s8(wq[r], xv));
        acc[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_set1_ps(dw[r] * a->d), acc[r][c]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) y[c * ys + r] = hsum256(acc[r][c]);
}

// Q8_0 without VNNI: |w| x (x with w's sign), as the products fit vpmaddubsw's int16 pairs.
template <int R, int C>
inline void q8_tile(const uint8_t* w, size_t wrb, const uint8_t* x, size_t xrb, int64_t nb,
                    float* y, int64_t ys) {
  __m256 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    __m256i wq[R], wabs[R];
    float dw[R];
    for (int r = 0; r < R; ++r) {
      const auto* blk = reinterpret_cast<const quant::BlockQ8_0*>(w + r * wrb) + b;
      wq[r] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk->q));
      wabs[r] = _mm256_sign_epi8(wq[r], wq[r]);
      dw[r] = _cvtsh_ss(blk->d);
    }
    for (int c = 0; c < C; ++c) {
      const auto* a = reinterpret_cast<const ActBlock*>(x + c * xrb) + b;
      const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a->q));
      for (int r = 0; r < R; ++r) {
        const __m256i s = dot_u8_s8(wabs[r], _mm256_sign_epi8(xv, wq[r]));
        acc[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_set1_ps(dw[r] * a->d), acc[r][c]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) y[c * ys + r] = hsum256(acc[r][c]);
}

// Q2_B: plane p of a block's 32 code bytes, doubled (2q in 0..6, unsigned for vpmaddubsw):
// (qs >> (2p - 1)) & 6 with 16-bit shifts (the mask drops the bits that cross bytes). Plane p
// meets activations 32p .. 32p + 31 of the block's ActBlock128; the four planes' sums and
// -3 * sum(a) add up in int32 before the one conversion per row and token.
inline __m256i q2b_plane(__m256i qs, int plane) {
  const __m256i shifted = plane == 0 ? _mm256_slli_epi16(qs, 1) : _mm256_srli_epi16(qs, 2 * plane - 1);
  return _mm256_and_si256(shifted, _mm256_set1_epi8(6));
}

template <int R, int C>
inline void q2b_tile(const uint8_t* w, size_t wrb, const uint8_t* x, size_t xrb, int64_t nb,
                     float* y, int64_t ys) {
  __m256 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    for (int r = 0; r < R; ++r) {
      const auto* blk = reinterpret_cast<const quant::BlockQ2B*>(w + r * wrb) + b;
      const __m256i qs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk->qs));
      __m256i wq[4];
      for (int p = 0; p < 4; ++p) wq[p] = q2b_plane(qs, p);
      const float half_dw = 0.5f * _cvtsh_ss(blk->d);
      for (int c = 0; c < C; ++c) {
        const auto* a = reinterpret_cast<const ActBlock128*>(x + c * xrb) + b;
        __m256i s = _mm256_zextsi128_si256(_mm_cvtsi32_si128(-3 * a->sum));
        for (int p = 0; p < 4; ++p) {
          const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a->q + 32 * p));
          s = _mm256_add_epi32(s, dot_u8_s8(wq[p], xv));
        }
        acc[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_set1_ps(half_dw * a->d), acc[r][c]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) y[c * ys + r] = hsum256(acc[r][c]);
}

#define AFM_TILE_ROWS 4
#define AFM_TILE_COLS 2
#include "backend/cpu/gemm_tiling.inc"

}  // namespace

const GemmKernels* avx2_gemm_kernels_impl() {
  static const GemmKernels kernels{"avx2",    gemm_f32,  gemm_f16,  gemm_bf16,
                                   gemm_q8_0, gemm_q4_0, gemm_q8_0, gemm_q4_0,
                                   gemm_q2_b, avx2_ggml_block_kernels_impl(), avx2_ggml_block_kernels_impl(),
                                   quantize_activations, quantize_activations_128, quantize_activations_256,
                                   avx2_interleaved_kernels_impl()};
  return &kernels;
}

}  // namespace afm::cpu
#else
namespace afm::cpu {
const GemmKernels* avx2_gemm_kernels_impl() { return nullptr; }
}  // namespace afm::cpu
#endif
