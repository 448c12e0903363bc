// AVX2 decode of astc6x6 lane blocks (quant/astc_lanes.h) fused into the product with x.
//
// Per block: the 8-entry palette is computed in one register (the interpolation as one
// vpmaddwd of the endpoint pair against (64 - w, w) pairs, then ASTC's LNS-to-f16 mapping and
// vcvtph2ps); the 12 digit bytes are widened to 16-bit lanes and split into base-6 digits with
// multiply-high by ceil(2^16 / 6) (exact for 0..255); each of the 6 lane vectors is one vpermps of the
// palette and one fma.
#include <immintrin.h>

#include "backend/cpu/astc_lns_avx2.h"
#include "backend/cpu/gemm_astc_lanes.h"

namespace afm::cpu {
namespace {

namespace astc = quant::astc;
constexpr int kTile = astc::kTile;

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
// LNS-to-f16 mapping on 16-bit lanes: mantissa m -> 3m, 4m - 512 or 5m - 2048 by range, which
// is 3m + (m - 512)+ + (m - 1536)+ with saturating subtractions; clamped below infinity.
inline __m256 palette(const astc::LaneBlock* block, __m256i weight_pairs) {
  int32_t ends;
  __builtin_memcpy(&ends, &block->e0, 4);
  // vpmaddwd multiplies signed 16-bit values: bias the endpoints by -32768 and add it back.
  const __m256i e = _mm256_xor_si256(_mm256_set1_epi32(ends), _mm256_set1_epi32(static_cast<int32_t>(0x80008000u)));
  const __m256i lerp = _mm256_madd_epi16(e, weight_pairs);
  const __m256i c32 = _mm256_srli_epi32(_mm256_add_epi32(lerp, _mm256_set1_epi32(32768 * 64 + 32)), 6);
  const __m128i c = _mm_packus_epi32(_mm256_castsi256_si128(c32), _mm256_extracti128_si256(c32, 1));
  return _mm256_cvtph_ps(_mm256_castsi256_si128(astc_lns_to_f16(_mm256_castsi128_si256(c))));
}

// The palettes of two neighbouring blocks at once: both interpolations, then one 16-bit pass of
// the LNS mapping over both (the arithmetic of palette() on a full register instead of half).
inline void palettes(const astc::LaneBlock* pair, __m256i weight_pairs, __m256& first, __m256& second) {
  int32_t ends[2];
  __builtin_memcpy(&ends[0], &pair[0].e0, 4);
  __builtin_memcpy(&ends[1], &pair[1].e0, 4);
  const __m256i bias = _mm256_set1_epi32(static_cast<int32_t>(0x80008000u));
  const __m256i round = _mm256_set1_epi32(32768 * 64 + 32);
  const __m256i a = _mm256_srli_epi32(
      _mm256_add_epi32(_mm256_madd_epi16(_mm256_xor_si256(_mm256_set1_epi32(ends[0]), bias), weight_pairs), round), 6);
  const __m256i b = _mm256_srli_epi32(
      _mm256_add_epi32(_mm256_madd_epi16(_mm256_xor_si256(_mm256_set1_epi32(ends[1]), bias), weight_pairs), round), 6);
  // packus works per 128-bit lane: [a0-3 b0-3 | a4-7 b4-7]; the qword permute puts a then b.
  const __m256i h = astc_lns_to_f16(_mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xD8));
  first = _mm256_cvtph_ps(_mm256_castsi256_si128(h));
  second = _mm256_cvtph_ps(_mm256_extracti128_si256(h, 1));
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

// out[2d] += lanes 0-2 and out[2d + 1] += lanes 3-5 of s[d]: digit d's even and odd vectors
// summed hold the texels 12d .. 12d + 11, rows 2d and 2d + 1 (quant/astc_lanes.h).
inline void add_rows(const __m256 s[3], float out[kTile]) {
  alignas(32) float l[8];
  for (int d = 0; d < 3; ++d) {
    _mm256_store_ps(l, s[d]);
    out[2 * d] += (l[0] + l[1]) + l[2];
    out[2 * d + 1] += (l[3] + l[4]) + l[5];
  }
}

// One block's six lane vectors times its inputs into a[]: digit d's even and odd lanes.
inline void accumulate_block(const astc::LaneBlock* block, __m256 pal, const float* xp, __m256 (&a)[6]) {
  const Digits d = digits(block);
  const __m256 xe = _mm256_loadu_ps(xp), xo = _mm256_loadu_ps(xp + 8);
  a[0] = _mm256_fmadd_ps(even(pal, d.d0), xe, a[0]);
  a[1] = _mm256_fmadd_ps(odd(pal, d.d0), xo, a[1]);
  a[2] = _mm256_fmadd_ps(even(pal, d.d1), xe, a[2]);
  a[3] = _mm256_fmadd_ps(odd(pal, d.d1), xo, a[3]);
  a[4] = _mm256_fmadd_ps(even(pal, d.d2), xe, a[4]);
  a[5] = _mm256_fmadd_ps(odd(pal, d.d2), xo, a[5]);
}

void avx2_row(const astc::LaneBlock* blocks, const uint16_t* offsets, const float* sums,
              int64_t tile_cols, const float* xpat, float out[kTile]) {
  const __m256i weight_pairs = constants().weight_pairs;
  __m256 a[6];
  for (__m256& v : a) v = _mm256_setzero_ps();
  int64_t tc = 0;
  for (; tc + 2 <= tile_cols; tc += 2) {
    __m256 pal[2];
    palettes(blocks + tc, weight_pairs, pal[0], pal[1]);
    for (int i = 0; i < 2; ++i) accumulate_block(blocks + tc + i, pal[i], xpat + (tc + i) * kXpatFloats, a);
  }
  if (tc < tile_cols) accumulate_block(blocks + tc, palette(blocks + tc, weight_pairs), xpat + tc * kXpatFloats, a);
  // The tile offsets' term, 8 tiles at a time.
  __m256 o = _mm256_setzero_ps();
  tc = 0;
  for (; tc + 8 <= tile_cols; tc += 8) {
    const __m256 off = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(offsets + tc)));
    o = _mm256_fmadd_ps(off, _mm256_loadu_ps(sums + tc), o);
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, o);
  float offset_sum = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  for (; tc < tile_cols; ++tc) offset_sum += _cvtsh_ss(offsets[tc]) * sums[tc];
  for (int y = 0; y < kTile; ++y) out[y] = offset_sum;
  const __m256 s[3] = {_mm256_add_ps(a[0], a[1]), _mm256_add_ps(a[2], a[3]), _mm256_add_ps(a[4], a[5])};
  add_rows(s, out);
}

void avx2_exception(const astc::LaneException& e, const float* xpat, float out[kTile]) {
  const __m256 xe = _mm256_loadu_ps(xpat), xo = _mm256_loadu_ps(xpat + 8);
  __m256 s[3];
  for (int d = 0; d < 3; ++d) {
    const __m256 we = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(e.lanes + 16 * d)));
    const __m256 wo = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(e.lanes + 16 * d + 8)));
    s[d] = _mm256_fmadd_ps(wo, xo, _mm256_mul_ps(we, xe));
  }
  add_rows(s, out);
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

// 8 tokens at a time: the six inputs and the sums loaded once, each row's accumulator read
// and written once per tile.
void avx2_tile_product(const float* tile, float offset, const float* x, const float* sums,
                       int64_t n_tok, float* acc) {
  const __m256 off = _mm256_set1_ps(offset);
  int64_t t = 0;
  for (; t + 8 <= n_tok; t += 8) {
    __m256 xi[kTile];
    for (int i = 0; i < kTile; ++i) xi[i] = _mm256_loadu_ps(x + i * n_tok + t);
    const __m256 s = _mm256_loadu_ps(sums + t);
    for (int y = 0; y < kTile; ++y) {
      const float* w = tile + y * kTile;
      float* a = acc + y * n_tok + t;
      __m256 even_part = _mm256_fmadd_ps(off, s, _mm256_loadu_ps(a));
      __m256 odd_part = _mm256_mul_ps(_mm256_set1_ps(w[1]), xi[1]);
      even_part = _mm256_fmadd_ps(_mm256_set1_ps(w[0]), xi[0], even_part);
      odd_part = _mm256_fmadd_ps(_mm256_set1_ps(w[3]), xi[3], odd_part);
      even_part = _mm256_fmadd_ps(_mm256_set1_ps(w[2]), xi[2], even_part);
      odd_part = _mm256_fmadd_ps(_mm256_set1_ps(w[5]), xi[5], odd_part);
      even_part = _mm256_fmadd_ps(_mm256_set1_ps(w[4]), xi[4], even_part);
      _mm256_storeu_ps(a, _mm256_add_ps(even_part, odd_part));
    }
  }
  for (; t < n_tok; ++t) {
    for (int y = 0; y < kTile; ++y) {
      float a = acc[y * n_tok + t] + offset * sums[t];
      for (int i = 0; i < kTile; ++i) a += tile[y * kTile + i] * x[i * n_tok + t];
      acc[y * n_tok + t] = a;
    }
  }
}

#endif

}  // namespace

const AstcLaneKernels* astc_lane_kernels_avx2() {
#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
  static const AstcLaneKernels k{avx2_row, avx2_exception, avx2_decode, avx2_tile_product, nullptr};
  return &k;
#else
  return nullptr;
#endif
}

}  // namespace afm::cpu
