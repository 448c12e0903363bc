// AVX2 + FMA + F16C kernels, for CPUs without AVX-512. Same tiling as gemm_avx512.cpp (see
// there); compiled with these flags for this file only, so helpers stay file-local.
// Without VNNI the byte dot products use vpmaddubsw (u8 x s8 -> s16 pairs) then vpmaddwd.
// The set's activation quantizers are here too (gemm.h's rule, bit for bit).
#include "backend/cpu/gemm.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "quant/balanced_2bit.h"
#include "quant/block_formats.h"

namespace afm::cpu {
namespace {

#include "backend/cpu/avx2_helpers.inc"

struct LoadF32 {
  static constexpr int kBytes = 4;
  static __m256 load(const uint8_t* p) { return _mm256_loadu_ps(reinterpret_cast<const float*>(p)); }
  static float value(const uint8_t* p) { return *reinterpret_cast<const float*>(p); }
};

struct LoadF16 {
  static constexpr int kBytes = 2;
  static __m256 load(const uint8_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static float value(const uint8_t* p) { return _cvtsh_ss(*reinterpret_cast<const uint16_t*>(p)); }
};

struct LoadBF16 {
  static constexpr int kBytes = 2;
  static __m256 load(const uint8_t* p) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  static float value(const uint8_t* p) {
    const uint32_t u = static_cast<uint32_t>(*reinterpret_cast<const uint16_t*>(p)) << 16;
    return _mm_cvtss_f32(_mm_castsi128_ps(_mm_cvtsi32_si128(static_cast<int>(u))));
  }
};

#include "backend/cpu/float_rows.inc"
using GroupRows = GroupRowsOf<kAvx2PieceValues>;

// One vector step of an R x C float tile at value i: the C inputs stay in registers and each
// row's weights are loaded (and widened) once for all of them, so a 4 x 3 tile holds 12 sums,
// 3 inputs and one weight vector: AVX2's 16 registers, and 7 loads per 12 fma.
template <class Load, int R, int C>
inline void float_step(const uint8_t* const (&row)[R], const float* const (&xc)[C], int64_t i,
                       __m256 (&acc)[R][C]) {
  __m256 xv[C];
  for (int c = 0; c < C; ++c) xv[c] = _mm256_loadu_ps(xc[c] + i);
  for (int r = 0; r < R; ++r) {
    const __m256 wv = Load::load(row[r] + i * Load::kBytes);
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_fmadd_ps(wv, xv[c], acc[r][c]);
  }
}

// Each output sums its lane i over the values congruent to i mod 8 below k rounded down to 8,
// in order, then hsum256, then the last k % 8 products one by one: the same for every tile shape
// and both row walks, so outputs do not depend on the batch or the layout.
template <class Load, class Rows, int R, int C>
inline void float_tile(const uint8_t* w, size_t wrb, const uint8_t* x, size_t xrb, int64_t k,
                       float* y, int64_t ys) {
  __m256 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  const float* xc[C];
  for (int c = 0; c < C; ++c) xc[c] = reinterpret_cast<const float*>(x + c * xrb);
  const int64_t vector_end = k / 8 * 8;
  // Runs of values that lie contiguously in every row: the whole row in the file's layout; in
  // the float groups each piece (one vector step here), then the rows' last k % 8 values.
  const int64_t run = Rows::kRunValues > 0 ? Rows::kRunValues : vector_end;
  const int64_t runs_end = Rows::kRunValues > 0 ? vector_end / run * run : vector_end;
  for (int64_t i0 = 0; i0 < runs_end; i0 += run) {
    const uint8_t* row[R];
    if constexpr (Rows::kRunValues > 0 && R == kFloatGroupRows) {
      // The pieces follow one another, each holding the R rows' runs back to back: no lookup
      // per piece (a piece of the AVX2 set is one step).
      const uint8_t* piece = w + i0 * R * Load::kBytes;
      for (int r = 0; r < R; ++r) row[r] = piece + (r * run - i0) * Load::kBytes;
    } else {
      for (int r = 0; r < R; ++r) row[r] = Rows::at(w, wrb, k, r, i0, Load::kBytes) - i0 * Load::kBytes;
    }
    if (Rows::kStreamsFromFile && C == 1) {
      // Decode (one token) streams each row once, and the hardware prefetcher alone left it well
      // under the memory bandwidth: ask for the next tile's rows a line at a time, and for this
      // tile's 16 KB ahead into L2 (gemm.h). Batches reuse each row from L2.
      for (int64_t i = i0; i < i0 + run; i += 8) {
        if ((i * Load::kBytes) % 64 == 0) {
          for (int r = 0; r < R; ++r) {
            _mm_prefetch(reinterpret_cast<const char*>(w + (r + R) * wrb + i * Load::kBytes), _MM_HINT_T0);
            _mm_prefetch(reinterpret_cast<const char*>(row[r] + i * Load::kBytes) + kFarPrefetchBytes, _MM_HINT_T1);
          }
        }
        float_step<Load, R, C>(row, xc, i, acc);
      }
      continue;
    }
    if (!Rows::kStreamsFromFile && C == 1) {
      // Decode on the float groups: a run is one piece of the group, read front to back;
      // ask for its lines kAvx2DecodePrefetchBytes ahead into L1 (gemm.h).
      const char* piece = reinterpret_cast<const char*>(row[0] + i0 * Load::kBytes);
      for (int line = 0; line < R * Rows::kRunValues * Load::kBytes; line += 64) {
        _mm_prefetch(piece + kAvx2DecodePrefetchBytes + line, _MM_HINT_T0);
      }
    }
    if constexpr (Rows::kRunValues > 0) {
#pragma GCC unroll 4
      for (int64_t s = 0; s < Rows::kRunValues; s += 8) float_step<Load, R, C>(row, xc, i0 + s, acc);
    } else {
      for (int64_t i = i0; i < i0 + run; i += 8) float_step<Load, R, C>(row, xc, i, acc);
    }
  }
  if (runs_end < vector_end) {
    const uint8_t* row[R];
    for (int r = 0; r < R; ++r) row[r] = Rows::at(w, wrb, k, r, runs_end, Load::kBytes) - runs_end * Load::kBytes;
    for (int64_t i = runs_end; i < vector_end; i += 8) float_step<Load, R, C>(row, xc, i, acc);
  }
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) {
      float s = hsum256(acc[r][c]);
      for (int64_t j = vector_end; j < k; ++j) s += Load::value(Rows::at(w, wrb, k, r, j, Load::kBytes)) * xc[c][j];
      y[c * ys + r] = s;
    }
  }
}

// Q8_0 / Q4_0 tiles: each (row, token) pair's block dot product is summed exactly in integers
// (the eight int32 lanes of a pair reduced together with the other pairs' by reduce_lanes), then
// converted and fma'd with d_w * d_a, block after block: what the interleaved kernels
// (gemm_avx2_interleaved.cpp) compute too, so the two layouts agree bit for bit at any batch.
// Pair i = c * R + r of the tile is lane i of the accumulator.
template <int R, int C>
inline __m256 pair_scales(const float (&dw)[R], const ActBlock* const (&a)[C]) {
  alignas(32) float sc[8] = {};
  for (int c = 0; c < C; ++c)
    for (int r = 0; r < R; ++r) sc[c * R + r] = dw[r] * a[c]->d;
  return _mm256_load_ps(sc);
}

template <int R, int C>
inline void store_pairs(__m256 acc, float* y, int64_t ys) {
  alignas(32) float out[8];
  _mm256_store_ps(out, acc);
  for (int c = 0; c < C; ++c)
    for (int r = 0; r < R; ++r) y[c * ys + r] = out[c * R + r];
}

template <int R, int C>
inline void q4_tile_pairs(const uint8_t* w, size_t wrb, const uint8_t* x, size_t xrb, int64_t nb,
                          float* y, int64_t ys) {
  __m256 acc = _mm256_setzero_ps();
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
    const ActBlock* a[C];
    __m256i lanes[8];
    alignas(32) int32_t bias[8] = {};
    for (int c = 0; c < C; ++c) {
      a[c] = reinterpret_cast<const ActBlock*>(x + c * xrb) + b;
      const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[c]->q));
      for (int r = 0; r < R; ++r) {
        lanes[c * R + r] = dot_u8_s8(wq[r], xv);
        bias[c * R + r] = -8 * a[c]->sum;  // the codes' zero point
      }
    }
    for (int i = R * C; i < 8; ++i) lanes[i] = _mm256_setzero_si256();
    const __m256i sums = _mm256_add_epi32(reduce_lanes(lanes), _mm256_load_si256(reinterpret_cast<const __m256i*>(bias)));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums), pair_scales<R, C>(dw, a), acc);
  }
  store_pairs<R, C>(acc, y, ys);
}


// Q8_0 without VNNI: |w| x (x with w's sign), as the products fit vpmaddubsw's int16 pairs.
template <int R, int C>
inline void q8_tile_pairs(const uint8_t* w, size_t wrb, const uint8_t* x, size_t xrb, int64_t nb,
                          float* y, int64_t ys) {
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    __m256i wq[R], wabs[R];
    float dw[R];
    for (int r = 0; r < R; ++r) {
      const auto* blk = reinterpret_cast<const quant::BlockQ8_0*>(w + r * wrb) + b;
      wq[r] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk->q));
      wabs[r] = _mm256_sign_epi8(wq[r], wq[r]);
      dw[r] = _cvtsh_ss(blk->d);
    }
    const ActBlock* a[C];
    __m256i lanes[8];
    for (int c = 0; c < C; ++c) {
      a[c] = reinterpret_cast<const ActBlock*>(x + c * xrb) + b;
      const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[c]->q));
      for (int r = 0; r < R; ++r) lanes[c * R + r] = dot_u8_s8(wabs[r], _mm256_sign_epi8(xv, wq[r]));
    }
    for (int i = R * C; i < 8; ++i) lanes[i] = _mm256_setzero_si256();
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(reduce_lanes(lanes)), pair_scales<R, C>(dw, a), acc);
  }
  store_pairs<R, C>(acc, y, ys);
}


// At most 8 (row, token) pairs per call of PAIRS (one accumulator lane each): wider tiles,
// which the tile adapter instantiates but drive() never runs on AVX2, split their tokens.
#define AFM_PAIR_TILE(NAME, PAIRS)                                                            \
  template <int R, int C>                                                                     \
  inline void NAME(const uint8_t* w, size_t wrb, const uint8_t* x, size_t xrb, int64_t nb,    \
                   float* y, int64_t ys) {                                                    \
    if constexpr (R * C > 8) {                                                                \
      NAME<R, 2>(w, wrb, x, xrb, nb, y, ys);                                                  \
      NAME<R, C - 2>(w, wrb, x + 2 * xrb, xrb, nb, y + 2 * ys, ys);                           \
    } else {                                                                                  \
      PAIRS<R, C>(w, wrb, x, xrb, nb, y, ys);                                                 \
    }                                                                                         \
  }
AFM_PAIR_TILE(q4_tile, q4_tile_pairs)
AFM_PAIR_TILE(q8_tile, q8_tile_pairs)
#undef AFM_PAIR_TILE

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

// Activation quantization (gemm.h: quantize_activations*): the scalar rule, eight values per
// instruction. vcvtps2dq rounds half to even in the default rounding mode, as nearbyint does;
// a block holding NaN or inf goes to the scalar code, which keeps it non-finite.
template <int N>
bool quantize_block_avx2(const float* x, int8_t* q, float& d_out) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  __m256 amax = _mm256_setzero_ps();
  for (int i = 0; i < N; i += 8) amax = _mm256_max_ps(amax, _mm256_and_ps(_mm256_loadu_ps(x + i), abs_mask));
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  const float a = _mm_cvtss_f32(m);
  // vmaxps drops NaN (it returns its second operand), so look for one separately.
  __m256 nan = _mm256_setzero_ps();
  for (int i = 0; i < N; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }
  if (!std::isfinite(a) || _mm256_movemask_ps(nan) != 0) return false;
  float d = a / 127.0f;
  float inv = d != 0 ? 1.0f / d : 0.0f;
  if (!std::isfinite(inv)) d = 0, inv = 0;
  const __m256 scale = _mm256_set1_ps(inv);
  for (int i = 0; i < N; i += 32) {
    __m256i v[4];
    for (int j = 0; j < 4; ++j) v[j] = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + i + 8 * j), scale));
    const __m256i packed = _mm256_packs_epi16(_mm256_packs_epi32(v[0], v[1]), _mm256_packs_epi32(v[2], v[3]));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + i),
                        _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
  }
  d_out = d;
  return true;
}

int32_t byte_sum(const int8_t* q, int n) {
  int32_t sum = 0;
  for (int i = 0; i < n; ++i) sum += q[i];
  return sum;
}

template <int N, class Block>
void quantize_with_sum(const float* x, Block* y, int64_t k,
                       void (*scalar)(const float*, Block*, int64_t)) {
  for (int64_t b = 0; b < k / N; ++b) {
    if (!quantize_block_avx2<N>(x + N * b, y[b].q, y[b].d)) {
      scalar(x + N * b, y + b, N);
      continue;
    }
    y[b].sum = byte_sum(y[b].q, N);
  }
}

void quantize_32(const float* x, ActBlock* y, int64_t k) {
  quantize_with_sum<32>(x, y, k, quantize_activations);
}
void quantize_128(const float* x, ActBlock128* y, int64_t k) {
  quantize_with_sum<128>(x, y, k, quantize_activations_128);
}
void quantize_256(const float* x, ActBlock256* y, int64_t k) {
  for (int64_t b = 0; b < k / 256; ++b) {
    if (!quantize_block_avx2<256>(x + 256 * b, y[b].q, y[b].d)) {
      quantize_activations_256(x + 256 * b, y + b, 256);
      continue;
    }
    for (int g = 0; g < 16; ++g) y[b].sums[g] = static_cast<int16_t>(byte_sum(y[b].q + 16 * g, 16));
  }
}

#define AFM_TILE_ROWS 4
#define AFM_TILE_COLS 2
#define AFM_FLOAT_TILE_COLS 3
#include "backend/cpu/gemm_tiling.inc"

}  // namespace

FloatGroupKernels avx2_float_group_kernels_impl() { return {gemm_f16_groups, gemm_bf16_groups}; }

const GemmKernels* avx2_gemm_kernels_impl() {
  static const GemmKernels kernels{"avx2",    gemm_f32,  gemm_f16,  gemm_bf16,
                                   gemm_q8_0, gemm_q4_0, gemm_q8_0, gemm_q4_0,
                                   gemm_q2_b, avx2_ggml_block_kernels_impl(), avx2_ggml_block_kernels_impl(),
                                   quantize_32, quantize_128, quantize_256,
                                   avx2_interleaved_kernels_impl()};
  return &kernels;
}

}  // namespace afm::cpu
#else
namespace afm::cpu {
FloatGroupKernels avx2_float_group_kernels_impl() { return {gemm_f16_groups, gemm_bf16_groups}; }

const GemmKernels* avx2_gemm_kernels_impl() { return nullptr; }
}  // namespace afm::cpu
#endif
