// AVX2 decode of astc6x6 lane blocks (quant/astc_lanes.h) fused into the product with x.
//
// Per block: the 8-entry palette is computed in one register (the interpolation as one
// vpmaddwd of the endpoint pair against (64 - w, w) pairs, then ASTC's LNS-to-f16 mapping and
// vcvtph2ps); the 12 digit bytes are widened to 16-bit lanes and split into base-6 digits with
// multiply-high by ceil(2^16 / 6) (exact for 0..255); each of the 6 lane vectors is one vpermps of the
// palette and one fma.
#include <immintrin.h>

#include "backend/cpu/gemm_astc_lanes.h"

namespace afm::cpu {
namespace {

namespace astc = quant::astc;

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)

struct Constants {
  __m256i weight_pairs;  // 16-bit (64 - w_k, w_k) per 32-bit lane k; (64, 0) for lanes 6, 7
  Constants() {
    alignas(32) int16_t pairs[16];
    for (int k = 0; k < 8; ++k) {
      const int w = k < astc::kLevels ? astc::lane_weights()[k] : 0;
      pairs[2 * k] = static_cast<int16_t>(64 - w);
      pairs[2 * k + 1] = static_cast<int16_t>(w);
    }
    weight_pairs = _mm256_load_si256(reinterpret_cast<const __m256i*>(pairs));
  }
};

const Constants& constants() {
  static const Constants c;
  return c;
}

// ASTC's interpolation (e0 (64 - w) + e1 w + 32) >> 6 of 16-bit LNS endpoints, then its
// LNS-to-f16 mapping (piecewise-linear mantissa, clamped below infinity), as floats.
inline __m256 palette(const astc::LaneBlock* block, __m256i weight_pairs) {
  int32_t ends;
  __builtin_memcpy(&ends, &block->e0, 4);
  // vpmaddwd multiplies signed 16-bit values: bias the endpoints by -32768 and add it back.
  const __m256i e = _mm256_xor_si256(_mm256_set1_epi32(ends), _mm256_set1_epi32(static_cast<int32_t>(0x80008000u)));
  const __m256i lerp = _mm256_madd_epi16(e, weight_pairs);
  const __m256i c = _mm256_srli_epi32(_mm256_add_epi32(lerp, _mm256_set1_epi32(32768 * 64 + 32)), 6);
  const __m256i mc = _mm256_and_si256(c, _mm256_set1_epi32(0x7FF));
  const __m256i exponent = _mm256_and_si256(_mm256_srli_epi32(c, 1), _mm256_set1_epi32(0x7C00));
  const __m256i m4 = _mm256_slli_epi32(mc, 2);
  const __m256i m3 = _mm256_add_epi32(mc, _mm256_slli_epi32(mc, 1));
  const __m256i m4b = _mm256_sub_epi32(m4, _mm256_set1_epi32(512));
  const __m256i m5 = _mm256_sub_epi32(_mm256_add_epi32(m4, mc), _mm256_set1_epi32(2048));
  const __m256i low = _mm256_cmpgt_epi32(_mm256_set1_epi32(512), mc);
  const __m256i high = _mm256_cmpgt_epi32(mc, _mm256_set1_epi32(1535));
  __m256i mt = _mm256_blendv_epi8(m4b, m3, low);
  mt = _mm256_blendv_epi8(mt, m5, high);
  __m256i h = _mm256_or_si256(exponent, _mm256_srli_epi32(mt, 3));
  h = _mm256_min_epu32(h, _mm256_set1_epi32(0x7BFF));
  const __m128i h16 = _mm_packus_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
  return _mm256_cvtph_ps(h16);
}

// The three digit vectors of a block's 16 bytes as 16-bit lanes: d0 = b % 6, d1 = (b / 6) % 6,
// d2 = b / 36.
struct Digits {
  __m256i d0, d1, d2;
};

inline Digits digits(const astc::LaneBlock* block) {
  const __m256i b = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block)));
  // floor(b * 10923 / 2^16) = b / 6 for every b < 256 (10923 = ceil(2^16 / 6)).
  const __m256i sixth = _mm256_set1_epi16(10923), k6 = _mm256_set1_epi16(6);
  const __m256i q1 = _mm256_mulhi_epu16(b, sixth);
  const __m256i q2 = _mm256_mulhi_epu16(q1, sixth);
  return {_mm256_sub_epi16(b, _mm256_mullo_epi16(q1, k6)), _mm256_sub_epi16(q1, _mm256_mullo_epi16(q2, k6)), q2};
}

// vpermps reads the low 3 bits of each 32-bit lane: the even byte's digit; the odd byte's
// after a 16-bit shift.
inline __m256 even(__m256 pal, __m256i d) { return _mm256_permutevar8x32_ps(pal, d); }
inline __m256 odd(__m256 pal, __m256i d) { return _mm256_permutevar8x32_ps(pal, _mm256_srli_epi32(d, 16)); }

float avx2_row(const astc::LaneBlock* blocks, const uint16_t* offsets, const float* sums,
               int64_t tile_cols, const float* xpat, float acc[astc::kLanes]) {
  const __m256i weight_pairs = constants().weight_pairs;
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0;
  for (int64_t tc = 0; tc < tile_cols; ++tc) {
    const __m256 pal = palette(blocks + tc, weight_pairs);
    const Digits d = digits(blocks + tc);
    const float* xp = xpat + tc * astc::kLanes;
    a0 = _mm256_fmadd_ps(even(pal, d.d0), _mm256_loadu_ps(xp), a0);
    a1 = _mm256_fmadd_ps(odd(pal, d.d0), _mm256_loadu_ps(xp + 8), a1);
    a2 = _mm256_fmadd_ps(even(pal, d.d1), _mm256_loadu_ps(xp + 16), a2);
    a3 = _mm256_fmadd_ps(odd(pal, d.d1), _mm256_loadu_ps(xp + 24), a3);
    a4 = _mm256_fmadd_ps(even(pal, d.d2), _mm256_loadu_ps(xp + 32), a4);
    a5 = _mm256_fmadd_ps(odd(pal, d.d2), _mm256_loadu_ps(xp + 40), a5);
  }
  const __m256 parts[6] = {a0, a1, a2, a3, a4, a5};
  for (int v = 0; v < 6; ++v) _mm256_storeu_ps(acc + 8 * v, _mm256_add_ps(_mm256_loadu_ps(acc + 8 * v), parts[v]));
  // The tile offsets' term, 8 tiles at a time.
  __m256 o = _mm256_setzero_ps();
  int64_t tc = 0;
  for (; tc + 8 <= tile_cols; tc += 8) {
    const __m256 off = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(offsets + tc)));
    o = _mm256_fmadd_ps(off, _mm256_loadu_ps(sums + tc), o);
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, o);
  float offset_sum = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  for (; tc < tile_cols; ++tc) {
    offset_sum += _cvtsh_ss(offsets[tc]) * sums[tc];
  }
  return offset_sum;
}

void avx2_decode(const astc::LaneBlock& block, float lanes[astc::kLanes]) {
  const __m256 pal = palette(&block, constants().weight_pairs);
  const Digits d = digits(&block);
  _mm256_storeu_ps(lanes, even(pal, d.d0));
  _mm256_storeu_ps(lanes + 8, odd(pal, d.d0));
  _mm256_storeu_ps(lanes + 16, even(pal, d.d1));
  _mm256_storeu_ps(lanes + 24, odd(pal, d.d1));
  _mm256_storeu_ps(lanes + 32, even(pal, d.d2));
  _mm256_storeu_ps(lanes + 40, odd(pal, d.d2));
}

#endif

}  // namespace

const AstcLaneKernels* astc_lane_kernels_avx2() {
#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
  static const AstcLaneKernels k{avx2_row, avx2_decode};
  return &k;
#else
  return nullptr;
#endif
}

}  // namespace afm::cpu
