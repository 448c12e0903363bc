// AVX-512 (F/BW/VL/DQ + VNNI) kernels. Compiled with those flags for this file only and chosen
// at run time, so nothing here may be inlined into code that runs on other CPUs: helpers are
// file-local and no standard-library templates are instantiated.
//
// Register tiles of R weight rows x C tokens: each loaded weight vector is reused C times and
// each activation vector R times. Float types run 16 lanes; the quantised types run one 32-value
// block per 256-bit VNNI dot product (vpdpbusd: unsigned x signed bytes into int32 lanes).
#include "backend/cpu/gemm.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

#include "quant/balanced_2bit.h"
#include "quant/block_formats.h"

namespace afm::cpu {
namespace {

// Decode streams every weight once: each tile asks for the bytes this far ahead of each of its
// rows (the next tile's rows), which hides memory latency the hardware prefetcher leaves.
constexpr int kPrefetchBytes = 2048;
// (And kFarPrefetchBytes ahead into L2, gemm.h.)

struct LoadF32 {
  static constexpr int kBytes = 4;
  static __m512 load(const uint8_t* p) { return _mm512_loadu_ps(reinterpret_cast<const float*>(p)); }
  static __m512 load_tail(const uint8_t* p, __mmask16 m) {
    return _mm512_maskz_loadu_ps(m, reinterpret_cast<const float*>(p));
  }
};

struct LoadF16 {
  static constexpr int kBytes = 2;
  static __m512 load(const uint8_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static __m512 load_tail(const uint8_t* p, __mmask16 m) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
  }
};

struct LoadBF16 {
  static constexpr int kBytes = 2;
  static __m512 widen(__m256i h) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
  static __m512 load(const uint8_t* p) {
    return widen(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static __m512 load_tail(const uint8_t* p, __mmask16 m) {
    return widen(_mm256_maskz_loadu_epi16(m, p));
  }
};

#include "backend/cpu/float_rows.inc"
using GroupRows = GroupRowsOf<kAvx512PieceValues>;

template <class Load, class Rows, int R, int C>
inline void float_tile(const uint8_t* w, size_t wrb, const uint8_t* x, size_t xrb, int64_t k,
                       float* y, int64_t ys) {
  __m512 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= k; i += 16) {
    __m512 wv[R];
    for (int r = 0; r < R; ++r) {
      const uint8_t* p = Rows::at(w, wrb, k, r, i, Load::kBytes);
      if constexpr (Rows::kStreamsFromFile) {
        _mm_prefetch(reinterpret_cast<const char*>(p) + kPrefetchBytes, _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(p) + kFarPrefetchBytes, _MM_HINT_T1);
      }
      wv[r] = Load::load(p);
    }
    for (int c = 0; c < C; ++c) {
      const __m512 xv = _mm512_loadu_ps(reinterpret_cast<const float*>(x + c * xrb) + i);
      for (int r = 0; r < R; ++r) acc[r][c] = _mm512_fmadd_ps(wv[r], xv, acc[r][c]);
    }
  }
  if (i < k) {
    const __mmask16 m = static_cast<__mmask16>((1u << (k - i)) - 1);
    __m512 wv[R];
    for (int r = 0; r < R; ++r) wv[r] = Load::load_tail(Rows::at(w, wrb, k, r, i, Load::kBytes), m);
    for (int c = 0; c < C; ++c) {
      const __m512 xv = _mm512_maskz_loadu_ps(m, reinterpret_cast<const float*>(x + c * xrb) + i);
      for (int r = 0; r < R; ++r) acc[r][c] = _mm512_fmadd_ps(wv[r], xv, acc[r][c]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) y[c * ys + r] = _mm512_reduce_add_ps(acc[r][c]);
}

// Two 32-value blocks per 512-bit register: lanes 0-7 hold block b's int32 partial sums,
// lanes 8-15 block b + 1's, so each vpdpbusd / convert / scale / fma covers 64 products.
inline __m512 pair_scale(float lo, float hi) {
  return _mm512_insertf32x8(_mm512_set1_ps(lo), _mm256_set1_ps(hi), 1);
}

inline __m512i load_act_pair(const ActBlock* a) {
  return _mm512_inserti64x4(
      _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[0].q))),
      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[1].q)), 1);
}

inline __m256i unpack_q4(const quant::BlockQ4_0* blk) {
  const __m128i qs = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk->qs));
  const __m128i low_mask = _mm_set1_epi8(0x0f);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(qs, 4), low_mask),
                          _mm_and_si128(qs, low_mask));
}

// Q4_0, two blocks per register with the lanes arranged as the nibbles unpack:
//   int32 lanes 0-3: block b, values 0-15    lanes 4-7:  block b+1, values 0-15
//   lanes 8-11:      block b, values 16-31   lanes 12-15: block b+1, values 16-31
// so both blocks' 32 packed bytes unpack with one load, one shift and two ands. Nibbles are
// unsigned 0..15 (value = q - 8): vpdpbusd(q, x), with -8 * sum(x) as the starting value.
inline __m512i q4_pair_weights(const quant::BlockQ4_0* blk) {
  const __m256i qs = _mm256_inserti128_si256(
      _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk[0].qs))),
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk[1].qs)), 1);
  const __m256i mask = _mm256_set1_epi8(0x0f);
  const __m256i lo = _mm256_and_si256(qs, mask);                         // [b lo | b+1 lo]
  const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(qs, 4), mask);  // [b hi | b+1 hi]
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

// Activations of blocks b, b+1 in the same lane order.
inline __m512i q4_pair_acts(const ActBlock* a) {
  const __m512i x0 = _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[0].q)));
  const __m512i x1 = _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[1].q)));
  return _mm512_permutex2var_epi64(x0, _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11), x1);
}

// [s0 x4, s1 x4, s0 x4, s1 x4] from the two scales in the low lanes of v.
inline __m512 q4_pair_spread(__m128 v) {
  return _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1),
                               _mm512_castps128_ps512(v));
}

// The q8_0 / q4_0 tiles compute what the packed path (gemm_avx512_packed.inc) computes for each
// output, so that a token's outputs do not depend on how many tokens share the call: each
// block's integer dot product is summed exactly, then y = fma(float(dot_b), d_w * d_x, y) runs
// block after block from zero. The vpdpbusd lanes of R rows are reduced to one int32 per row
// and block by a transpose-and-add tree whose result has the R rows in the lanes of a 128-bit
// quarter (quarter_sums), so the float work is one 4-lane fma per block for all R rows.

// Each 128-bit quarter j of the result holds [sum of quarter j of s[0], ... of s[3]].
inline __m512i quarter_sums(const __m512i s[4]) {
  const __m512i t01 = _mm512_add_epi32(_mm512_unpacklo_epi32(s[0], s[1]), _mm512_unpackhi_epi32(s[0], s[1]));
  const __m512i t23 = _mm512_add_epi32(_mm512_unpacklo_epi32(s[2], s[3]), _mm512_unpackhi_epi32(s[2], s[3]));
  return _mm512_add_epi32(_mm512_unpacklo_epi64(t01, t23), _mm512_unpackhi_epi64(t01, t23));
}

// The same for a single block in 256-bit lanes: [sum of s[0], ..., sum of s[3]] (all 8 lanes).
inline __m128i block_sums(const __m256i s[4]) {
  const __m256i t01 = _mm256_add_epi32(_mm256_unpacklo_epi32(s[0], s[1]), _mm256_unpackhi_epi32(s[0], s[1]));
  const __m256i t23 = _mm256_add_epi32(_mm256_unpacklo_epi32(s[2], s[3]), _mm256_unpackhi_epi32(s[2], s[3]));
  const __m256i t = _mm256_add_epi32(_mm256_unpacklo_epi64(t01, t23), _mm256_unpackhi_epi64(t01, t23));
  return _mm_add_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
}

// acc (rows in lanes) += dot * (dw * dx), one block: the packed path's per-block step.
inline __m128 block_step(__m128i dot, __m128 dw, float dx, __m128 acc) {
  return _mm_fmadd_ps(_mm_cvtepi32_ps(dot), _mm_mul_ps(dw, _mm_set1_ps(dx)), acc);
}

// Row r's block scale in lane r (zero for rows past R).
template <int R, class Block>
inline __m128 row_scales(const uint8_t* w, size_t wrb, int64_t b) {
  __m128i h = _mm_setzero_si128();
  if constexpr (R > 0) h = _mm_insert_epi16(h, (reinterpret_cast<const Block*>(w) + b)->d, 0);
  if constexpr (R > 1) h = _mm_insert_epi16(h, (reinterpret_cast<const Block*>(w + wrb) + b)->d, 1);
  if constexpr (R > 2) h = _mm_insert_epi16(h, (reinterpret_cast<const Block*>(w + 2 * wrb) + b)->d, 2);
  if constexpr (R > 3) h = _mm_insert_epi16(h, (reinterpret_cast<const Block*>(w + 3 * wrb) + b)->d, 3);
  return _mm_cvtph_ps(h);
}

template <int R>
inline void store_rows(float* y, __m128 acc) {
  if constexpr (R == 4) {
    _mm_storeu_ps(y, acc);
  } else {
    _mm_mask_storeu_ps(y, static_cast<__mmask8>((1u << R) - 1), acc);
  }
}

// Q4_0 pair lanes (q4_pair_weights): block b in quarters 0 and 2, block b+1 in 1 and 3.
template <int R, int C>
inline void q4_tile(const uint8_t* w, size_t wrb, const uint8_t* x, size_t xrb, int64_t nb,
                    float* y, int64_t ys) {
  __m128 acc[C];
  for (int c = 0; c < C; ++c) acc[c] = _mm_setzero_ps();
  int64_t b = 0;
  for (; b + 2 <= nb; b += 2) {
    __m512i wq[R];
    for (int r = 0; r < R; ++r) {
      const auto* blk = reinterpret_cast<const quant::BlockQ4_0*>(w + r * wrb) + b;
      _mm_prefetch(reinterpret_cast<const char*>(blk) + kPrefetchBytes, _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(blk) + kFarPrefetchBytes, _MM_HINT_T1);
      wq[r] = q4_pair_weights(blk);
    }
    const __m128 dw0 = row_scales<R, quant::BlockQ4_0>(w, wrb, b);
    const __m128 dw1 = row_scales<R, quant::BlockQ4_0>(w, wrb, b + 1);
    for (int c = 0; c < C; ++c) {
      const auto* a = reinterpret_cast<const ActBlock*>(x + c * xrb) + b;
      const __m512i xv = q4_pair_acts(a);
      // -8 * sum(x) of each block in one lane of that block's lanes (0 and 4).
      const __m512i bias = _mm512_zextsi128_si512(_mm_setr_epi32(-8 * a[0].sum, 0, 0, 0));
      const __m512i bias1 = _mm512_maskz_set1_epi32(0x0010, -8 * a[1].sum);
      __m512i s[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                      _mm512_setzero_si512()};
      for (int r = 0; r < R; ++r) s[r] = _mm512_dpbusd_epi32(_mm512_or_si512(bias, bias1), wq[r], xv);
      const __m512i t = quarter_sums(s);
      const __m512i blocks = _mm512_add_epi32(t, _mm512_shuffle_i32x4(t, t, _MM_SHUFFLE(1, 0, 3, 2)));
      acc[c] = block_step(_mm512_castsi512_si128(blocks), dw0, a[0].d, acc[c]);
      acc[c] = block_step(_mm512_extracti32x4_epi32(blocks, 1), dw1, a[1].d, acc[c]);
    }
  }
  for (; b < nb; ++b) {
    __m256i wq[R];
    for (int r = 0; r < R; ++r) wq[r] = unpack_q4(reinterpret_cast<const quant::BlockQ4_0*>(w + r * wrb) + b);
    const __m128 dw = row_scales<R, quant::BlockQ4_0>(w, wrb, b);
    for (int c = 0; c < C; ++c) {
      const auto* a = reinterpret_cast<const ActBlock*>(x + c * xrb) + b;
      const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a->q));
      const __m256i bias = _mm256_castsi128_si256(_mm_cvtsi32_si128(-8 * a->sum));
      __m256i s[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                      _mm256_setzero_si256()};
      for (int r = 0; r < R; ++r) s[r] = _mm256_dpbusd_epi32(bias, wq[r], xv);
      acc[c] = block_step(block_sums(s), dw, a->d, acc[c]);
    }
  }
  for (int c = 0; c < C; ++c) store_rows<R>(y + c * ys, acc[c]);
}

// Q8_0: make the activations unsigned (x + 128, by flipping the top bit) and subtract
// 128 * sum(w), which one extra vpdpbusd per weight block pair computes for all C tokens.
// Pair lanes: block b in quarters 0 and 1, block b+1 in 2 and 3.
template <int R, int C>
inline void q8_tile(const uint8_t* w, size_t wrb, const uint8_t* x, size_t xrb, int64_t nb,
                    float* y, int64_t ys) {
  __m128 acc[C];
  for (int c = 0; c < C; ++c) acc[c] = _mm_setzero_ps();
  const __m512i k128 = _mm512_set1_epi8(static_cast<char>(0x80));
  int64_t b = 0;
  for (; b + 2 <= nb; b += 2) {
    __m512i wq[R], neg_bias[R];
    for (int r = 0; r < R; ++r) {
      const auto* blk = reinterpret_cast<const quant::BlockQ8_0*>(w + r * wrb) + b;
      _mm_prefetch(reinterpret_cast<const char*>(blk) + kPrefetchBytes, _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(blk) + kFarPrefetchBytes, _MM_HINT_T1);
      wq[r] = _mm512_inserti64x4(
          _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk[0].q))),
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk[1].q)), 1);
      neg_bias[r] = _mm512_sub_epi32(_mm512_setzero_si512(),
                                     _mm512_dpbusd_epi32(_mm512_setzero_si512(), k128, wq[r]));
    }
    const __m128 dw0 = row_scales<R, quant::BlockQ8_0>(w, wrb, b);
    const __m128 dw1 = row_scales<R, quant::BlockQ8_0>(w, wrb, b + 1);
    for (int c = 0; c < C; ++c) {
      const auto* a = reinterpret_cast<const ActBlock*>(x + c * xrb) + b;
      const __m512i xu = _mm512_xor_si512(load_act_pair(a), k128);
      __m512i s[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                      _mm512_setzero_si512()};
      for (int r = 0; r < R; ++r) s[r] = _mm512_dpbusd_epi32(neg_bias[r], xu, wq[r]);
      const __m512i t = quarter_sums(s);
      const __m512i blocks = _mm512_add_epi32(t, _mm512_shuffle_i32x4(t, t, _MM_SHUFFLE(2, 3, 0, 1)));
      acc[c] = block_step(_mm512_castsi512_si128(blocks), dw0, a[0].d, acc[c]);
      acc[c] = block_step(_mm512_extracti32x4_epi32(blocks, 2), dw1, a[1].d, acc[c]);
    }
  }
  for (; b < nb; ++b) {
    const __m256i k128y = _mm256_set1_epi8(static_cast<char>(0x80));
    __m256i wq[R], nb128[R];
    for (int r = 0; r < R; ++r) {
      const auto* blk = reinterpret_cast<const quant::BlockQ8_0*>(w + r * wrb) + b;
      wq[r] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk->q));
      nb128[r] = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_dpbusd_epi32(_mm256_setzero_si256(), k128y, wq[r]));
    }
    const __m128 dw = row_scales<R, quant::BlockQ8_0>(w, wrb, b);
    for (int c = 0; c < C; ++c) {
      const auto* a = reinterpret_cast<const ActBlock*>(x + c * xrb) + b;
      const __m256i xu = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a->q)), k128y);
      __m256i s[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                      _mm256_setzero_si256()};
      for (int r = 0; r < R; ++r) s[r] = _mm256_dpbusd_epi32(nb128[r], xu, wq[r]);
      acc[c] = block_step(block_sums(s), dw, a->d, acc[c]);
    }
  }
  for (int c = 0; c < C; ++c) store_rows<R>(y + c * ys, acc[c]);
}

// Q2_B: one 32-byte load gives a block's four code planes (2 bits each); two registers hold
// them as doubled codes 2q in 0..6 (unsigned bytes for vpdpbusd), planes 0 | 1 and 2 | 3,
// which line up with the block's 128 activations (one ActBlock128) as two 64-byte loads:
//   raw = [qs | qs >> 2] (16-bit shifts; the masks drop the bits that cross bytes)
//   planes 0 | 1 = (raw << 1) & 6        planes 2 | 3 = (raw >> 3) & 6
// Both vpdpbusd accumulate into one register that starts from -3 * sum(a) in lane 0, so a
// block costs one conversion and one multiply-add per row and token.
template <int R, int C>
inline void q2b_tile(const uint8_t* w, size_t wrb, const uint8_t* x, size_t xrb, int64_t nb,
                     float* y, int64_t ys) {
  __m512 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
  const __m512i six = _mm512_set1_epi8(6);
  for (int64_t b = 0; b < nb; ++b) {
    __m512i w01[R], w23[R];
    float half_dw[R];
    for (int r = 0; r < R; ++r) {
      const auto* blk = reinterpret_cast<const quant::BlockQ2B*>(w + r * wrb) + b;
      _mm_prefetch(reinterpret_cast<const char*>(blk) + kPrefetchBytes, _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(blk) + kFarPrefetchBytes, _MM_HINT_T1);
      const __m256i qs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk->qs));
      const __m512i raw = _mm512_inserti64x4(_mm512_castsi256_si512(qs), _mm256_srli_epi16(qs, 2), 1);
      w01[r] = _mm512_and_si512(_mm512_slli_epi16(raw, 1), six);
      w23[r] = _mm512_and_si512(_mm512_srli_epi16(raw, 3), six);
      half_dw[r] = 0.5f * _cvtsh_ss(blk->d);
    }
    for (int c = 0; c < C; ++c) {
      const auto* a = reinterpret_cast<const ActBlock128*>(x + c * xrb) + b;
      const __m512i x01 = _mm512_loadu_si512(a->q), x23 = _mm512_loadu_si512(a->q + 64);
      const __m512i bias = _mm512_zextsi128_si512(_mm_cvtsi32_si128(-3 * a->sum));
      for (int r = 0; r < R; ++r) {
        const __m512i s = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(bias, w01[r], x01), w23[r], x23);
        acc[r][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_set1_ps(half_dw[r] * a->d), acc[r][c]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) y[c * ys + r] = _mm512_reduce_add_ps(acc[r][c]);
}

#include "backend/cpu/gemm_avx512_packed.inc"

#define AFM_TILE_ROWS 4
#define AFM_TILE_COLS 4
#include "backend/cpu/gemm_tiling.inc"

// Batches of at least kPackMinTokens go through the repacked 16-row path; the rest of the rows
// (and fewer tokens, where the repack would not pay) use the register tiles. Both compute the
// same sums, so this is a speed choice only: on the Qwen2-0.5B shape (q8_0, AMD EPYC, 2
// threads) 4-token passes ran 5% faster on the tiles, 6-token passes 10% faster packed.
constexpr int64_t kPackMinTokens = 6;

template <bool kQ4>
void gemm_quant_batched(const void* w, size_t wrb, int64_t nr, const void* x, size_t xrb,
                        int64_t nt, int64_t k, float* y, int64_t ys) {
  const auto* wb = static_cast<const uint8_t*>(w);
  int64_t r = 0;
  if (nt >= kPackMinTokens) {
    for (; r + kPackRows <= nr; r += kPackRows) {
      packed_group<kQ4>(wb + r * wrb, wrb, static_cast<const uint8_t*>(x), xrb, nt, k / 32, y + r, ys);
    }
  }
  if (r < nr) {
    if constexpr (kQ4) {
      gemm_q4_0(wb + r * wrb, wrb, nr - r, x, xrb, nt, k, y + r, ys);
    } else {
      gemm_q8_0(wb + r * wrb, wrb, nr - r, x, xrb, nt, k, y + r, ys);
    }
  }
}

void gemm_q4_0_batched(const void* w, size_t wrb, int64_t nr, const void* x, size_t xrb,
                       int64_t nt, int64_t k, float* y, int64_t ys) {
  gemm_quant_batched<true>(w, wrb, nr, x, xrb, nt, k, y, ys);
}
void gemm_q8_0_batched(const void* w, size_t wrb, int64_t nr, const void* x, size_t xrb,
                       int64_t nt, int64_t k, float* y, int64_t ys) {
  gemm_quant_batched<false>(w, wrb, nr, x, xrb, nt, k, y, ys);
}

// Same rounding as the scalar reference: |x| max -> d = amax / 127, q = round-half-even(x / d)
// (vcvtps2dq in the default rounding mode), so results are bit-identical. N values per block.
template <int N, class Block>
void quantize_blocks(const float* x, Block* y, int64_t k) {
  constexpr int kVectors = N / 16;
  const __m512 sign_off = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff));
  for (int64_t b = 0; b < k / N; ++b) {
    const float* xb = x + N * b;
    __m512 m = _mm512_setzero_ps();
    __mmask16 nan = 0;
    for (int v = 0; v < kVectors; ++v) {
      const __m512 xv = _mm512_loadu_ps(xb + 16 * v);
      m = _mm512_max_ps(m, _mm512_and_ps(xv, sign_off));
      // vmaxps drops NaN operands; the scalar reference keeps them: check for NaN explicitly.
      nan |= _mm512_cmp_ps_mask(xv, xv, _CMP_UNORD_Q);
    }
    const float amax = _mm512_reduce_max_ps(m);
    if (nan != 0 || amax == __builtin_inff()) {
      y[b] = Block{nan != 0 ? __builtin_nanf("") : amax, 0, {}};
      continue;
    }
    float d = amax / 127.0f;
    float inv_d = d != 0 ? 1.0f / d : 0.0f;
    if (!__builtin_isfinite(inv_d)) d = 0, inv_d = 0;  // as the scalar reference: a ~0 block
    const __m512 inv = _mm512_set1_ps(inv_d);
    __m512i sum = _mm512_setzero_si512();
    for (int v = 0; v < kVectors; ++v) {
      const __m512i q = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(xb + 16 * v), inv));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(y[b].q + 16 * v), _mm512_cvtsepi32_epi8(q));
      sum = _mm512_add_epi32(sum, q);
    }
    y[b].d = d;
    y[b].sum = _mm512_reduce_add_epi32(sum);
  }
}

void quantize(const float* x, ActBlock* y, int64_t k) { quantize_blocks<32>(x, y, k); }
void quantize_128(const float* x, ActBlock128* y, int64_t k) { quantize_blocks<128>(x, y, k); }

}  // namespace

FloatGroupKernels avx512_float_group_kernels_impl() { return {gemm_f16_groups, gemm_bf16_groups}; }

const GemmKernels* avx512_gemm_kernels_impl() {
  static const GemmKernels kernels{"avx512",          gemm_f32,  gemm_f16,
                                   gemm_bf16,         gemm_q8_0_batched,
                                   // The packed path and the tiles compute the same sums,
                                   // so the batched kernels are per-token exact too.
                                   gemm_q4_0_batched, gemm_q8_0_batched, gemm_q4_0_batched,
                                   gemm_q2_b,         avx512_ggml_block_kernels_impl(),
                                   avx512_ggml_per_token_kernels_impl(),
                                   quantize,
                                   quantize_128,
                                   quantize_activations_256,
                                   avx512_interleaved_kernels_impl()};
  return &kernels;
}

}  // namespace afm::cpu
#else
namespace afm::cpu {
FloatGroupKernels avx512_float_group_kernels_impl() { return {nullptr, nullptr}; }
const GemmKernels* avx512_gemm_kernels_impl() { return nullptr; }
}  // namespace afm::cpu
#endif
