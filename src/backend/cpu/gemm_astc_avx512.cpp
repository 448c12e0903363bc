// AVX-512 row kernel for astc6x6 lane blocks (quant/astc_lanes.h): two neighbouring blocks of a
// tile row per 512-bit register, block tc in lanes 0-7 and block tc + 1 in lanes 8-15.
//
// The AVX2 kernel (gemm_astc_avx2.cpp) computes one block's 8-entry palette in a quarter of its
// registers and spends six 8-lane permutes and fmas on 36 weights. Here the two blocks' 32 bytes
// are one load; their endpoints are interpolated together (one vpmaddwd), their palettes mapped
// from LNS to f16 in one 16-bit register and widened to 16 floats, and each 16-lane vpermps
// looks up both blocks at once (lanes 8-15 index the upper palette through a bit 3 set in their
// digits). Every other part of the set (exceptions, decode, batches) is the AVX2 set's.
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "backend/cpu/astc_lns_avx2.h"
#include "backend/cpu/gemm_astc_lanes.h"

namespace afm::cpu {
namespace {

namespace astc = quant::astc;
constexpr int kTile = astc::kTile;

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)

struct Constants {
  __m512i weight_pairs;  // per 32-bit lane k % 8: 16-bit (64 - w_k, w_k); (64, 0) past the levels
  Constants() {
    alignas(64) int16_t pairs[32];
    for (int k = 0; k < 16; ++k) {
      const int w = k % 8 < astc::kLevels ? astc::lane_weights()[k % 8] : 0;
      pairs[2 * k] = static_cast<int16_t>(64 - w);
      pairs[2 * k + 1] = static_cast<int16_t>(w);
    }
    weight_pairs = _mm512_load_si512(pairs);
  }
};

const Constants& constants() {
  static const Constants c;
  return c;
}

// The two blocks' palettes: lanes 0-7 block tc's, lanes 8-15 block tc + 1's. The arithmetic of
// the AVX2 kernel's palette(), on twice the lanes: ASTC's interpolation of the biased 16-bit LNS
// endpoints, then the LNS-to-f16 mapping 3m + (m - 512)+ + (m - 1536)+ of the mantissa.
inline __m512 palettes(__m512i bytes, __m512i weight_pairs) {
  // Dword 3 of each block holds (e0, e1): spread it over the block's 8 lanes.
  const __m512i ends = _mm512_permutexvar_epi32(
      _mm512_setr_epi32(3, 3, 3, 3, 3, 3, 3, 3, 7, 7, 7, 7, 7, 7, 7, 7), bytes);
  const __m512i e = _mm512_xor_si512(ends, _mm512_set1_epi32(static_cast<int32_t>(0x80008000u)));
  const __m512i lerp = _mm512_madd_epi16(e, weight_pairs);
  const __m512i c32 = _mm512_srli_epi32(_mm512_add_epi32(lerp, _mm512_set1_epi32(32768 * 64 + 32)), 6);
  return _mm512_cvtph_ps(astc_lns_to_f16(_mm512_cvtepi32_epi16(c32)));  // each value fits 16 bits
}

// The three digit vectors of both blocks' bytes as 16-bit lanes (32-bit lanes 0-7: block tc's
// byte pairs, 8-15: block tc + 1's), with bit 3 set in block tc + 1's so that a 16-lane permute
// reads its palette. d0 = b % 6, d1 = (b / 6) % 6, d2 = b / 36, as the AVX2 kernel.
struct Digits {
  __m512i d0, d1, d2;
};

inline Digits digits(__m256i raw) {
  const __m512i b = _mm512_cvtepu8_epi16(raw);
  const __m512i sixth = _mm512_set1_epi16(10923), k6 = _mm512_set1_epi16(6);
  const __m512i q1 = _mm512_mulhi_epu16(b, sixth);
  const __m512i q2 = _mm512_mulhi_epu16(q1, sixth);
  const __m512i upper = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0x80008, 0x80008, 0x80008, 0x80008,
                                          0x80008, 0x80008, 0x80008, 0x80008);
  return {_mm512_or_si512(_mm512_sub_epi16(b, _mm512_mullo_epi16(q1, k6)), upper),
          _mm512_or_si512(_mm512_sub_epi16(q1, _mm512_mullo_epi16(q2, k6)), upper),
          _mm512_or_si512(q2, upper)};
}

inline __m512 even(__m512 pal, __m512i d) { return _mm512_permutexvar_ps(d, pal); }
inline __m512 odd(__m512 pal, __m512i d) { return _mm512_permutexvar_ps(_mm512_srli_epi32(d, 16), pal); }

// Six accumulators: digit d's even (2d) and odd (2d + 1) lane vectors of both blocks.
struct Accumulators {
  __m512 a[6];
};

inline void accumulate_pair(const astc::LaneBlock* pair, const float* xpat, __m512i weight_pairs,
                            Accumulators& acc) {
  const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pair));
  const __m512 pal = palettes(_mm512_castsi256_si512(raw), weight_pairs);
  const Digits d = digits(raw);
  // The inputs of the two tile columns: [xe(tc) | xe(tc + 1)] and [xo(tc) | xo(tc + 1)].
  const __m512 x0 = _mm512_loadu_ps(xpat), x1 = _mm512_loadu_ps(xpat + kXpatFloats);
  const __m512 xe = _mm512_shuffle_f32x4(x0, x1, 0x44), xo = _mm512_shuffle_f32x4(x0, x1, 0xEE);
  acc.a[0] = _mm512_fmadd_ps(even(pal, d.d0), xe, acc.a[0]);
  acc.a[1] = _mm512_fmadd_ps(odd(pal, d.d0), xo, acc.a[1]);
  acc.a[2] = _mm512_fmadd_ps(even(pal, d.d1), xe, acc.a[2]);
  acc.a[3] = _mm512_fmadd_ps(odd(pal, d.d1), xo, acc.a[3]);
  acc.a[4] = _mm512_fmadd_ps(even(pal, d.d2), xe, acc.a[4]);
  acc.a[5] = _mm512_fmadd_ps(odd(pal, d.d2), xo, acc.a[5]);
}

float offsets_term(const uint16_t* offsets, const float* sums, int64_t tile_cols) {
  __m512 o = _mm512_setzero_ps();
  int64_t tc = 0;
  for (; tc + 16 <= tile_cols; tc += 16) {
    const __m512 off = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(offsets + tc)));
    o = _mm512_fmadd_ps(off, _mm512_loadu_ps(sums + tc), o);
  }
  if (tc < tile_cols) {
    const auto m = static_cast<__mmask16>((1u << (tile_cols - tc)) - 1);
    const __m512 off = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, offsets + tc));
    o = _mm512_fmadd_ps(off, _mm512_maskz_loadu_ps(m, sums + tc), o);
  }
  return _mm512_reduce_add_ps(o);
}

void avx512_row(const astc::LaneBlock* blocks, const uint16_t* offsets, const float* sums,
                int64_t tile_cols, const float* xpat, float out[kTile]) {
  const __m512i weight_pairs = constants().weight_pairs;
  Accumulators acc;
  for (__m512& a : acc.a) a = _mm512_setzero_ps();
  int64_t tc = 0;
  for (; tc + 2 <= tile_cols; tc += 2) accumulate_pair(blocks + tc, xpat + tc * kXpatFloats, weight_pairs, acc);
  if (tc < tile_cols) {  // the last block beside an all-zero block and zero inputs
    alignas(32) astc::LaneBlock pair[2] = {blocks[tc], {}};
    alignas(64) float x[2 * kXpatFloats] = {};
    for (int i = 0; i < kXpatFloats; ++i) x[i] = xpat[tc * kXpatFloats + i];
    accumulate_pair(pair, x, weight_pairs, acc);
  }
  const float offset_sum = offsets_term(offsets, sums, tile_cols);
  // Digit d's even and odd vectors summed hold the texels 12d .. 12d + 11 (rows 2d, 2d + 1):
  // lanes 0-2 and 3-5 of each block's half.
  for (int d = 0; d < 3; ++d) {
    const __m512 s = _mm512_add_ps(acc.a[2 * d], acc.a[2 * d + 1]);
    const __m256 both = _mm256_add_ps(_mm512_castps512_ps256(s), _mm512_extractf32x8_ps(s, 1));
    alignas(32) float l[8];
    _mm256_store_ps(l, both);
    out[2 * d] = offset_sum + ((l[0] + l[1]) + l[2]);
    out[2 * d + 1] = offset_sum + ((l[3] + l[4]) + l[5]);
  }
}

#if defined(__AVX512VNNI__)

// ---- the integer row path (gemm_astc_lanes.h, "row_q") -------------------------------------
//
// Four lane blocks, one 64-byte line, per step. Their palettes as integers on the tile row's
// scale (quant/astc_lanes.h) fill one register of 32 16-bit lanes, block j's 8 values at 8 j, so
// that a vpermw looks up 32 texels of two blocks at once; vpdpwssd multiplies them by the
// quantised input and adds texel pairs into 32-bit lanes. Against the float kernel: no
// conversion to f32 and no odd-lane shifts, 32 texels per lookup and product instead of 16, and
// the palette arithmetic runs on four blocks instead of two.

struct IntConstants {
  __m512i pairs_lo, pairs_hi;  // per 128-bit lane, 32-bit lane k: 16-bit (64 - w, w) of entry k / 4 + k
  __m512i slots[2];            // the palette offset of each digit lane: 0 / 8 (half 0), 16 / 24 (half 1)
  IntConstants() {
    alignas(64) int16_t lo[32], hi[32], slot[2][32];
    for (int lane = 0; lane < 16; ++lane) {
      for (int part = 0; part < 2; ++part) {
        const int k = lane % 4 + 4 * part;
        const int w = k < astc::kLevels ? astc::lane_weights()[k] : 0;
        int16_t* pairs = part == 0 ? lo : hi;
        pairs[2 * lane] = static_cast<int16_t>(64 - w);
        pairs[2 * lane + 1] = static_cast<int16_t>(w);
      }
    }
    for (int h = 0; h < 2; ++h) {
      for (int lane = 0; lane < 32; ++lane) slot[h][lane] = static_cast<int16_t>(16 * h + 8 * (lane / 16));
    }
    pairs_lo = _mm512_load_si512(lo);
    pairs_hi = _mm512_load_si512(hi);
    slots[0] = _mm512_load_si512(slot[0]);
    slots[1] = _mm512_load_si512(slot[1]);
  }
};

const IntConstants& int_constants() {
  static const IntConstants c;
  return c;
}

// The integer palettes of four blocks (lane_palette_int): the interpolation of the biased
// endpoints for entries 0-3 and 4-7 (two vpmaddwd against the 128-bit lane's dword 3, which
// holds the block's endpoints), packed to 16 bits, then the LNS mantissa mapping, the implicit
// bit and a shift by the exponent field's distance above the row's. A lane below the row's
// exponent (an exception's zero block) wraps to a count above 15, which vpsllvw turns into 0.
inline __m512i int_palettes(__m512i blocks, __m512i exponent, const IntConstants& c) {
  const __m512i ends = _mm512_xor_si512(_mm512_shuffle_epi32(blocks, _MM_PERM_DDDD),
                                        _mm512_set1_epi32(static_cast<int32_t>(0x80008000u)));
  const __m512i round = _mm512_set1_epi32(32768 * 64 + 32);
  const __m512i lo = _mm512_srli_epi32(_mm512_add_epi32(_mm512_madd_epi16(ends, c.pairs_lo), round), 6);
  const __m512i hi = _mm512_srli_epi32(_mm512_add_epi32(_mm512_madd_epi16(ends, c.pairs_hi), round), 6);
  const __m512i lns = _mm512_packus_epi32(lo, hi);  // per 128-bit lane: entries 0-3, then 4-7
  const __m512i mc = _mm512_and_si512(lns, _mm512_set1_epi16(0x7FF));
  __m512i mt = _mm512_mullo_epi16(mc, _mm512_set1_epi16(3));
  mt = _mm512_add_epi16(mt, _mm512_subs_epu16(mc, _mm512_set1_epi16(512)));
  mt = _mm512_add_epi16(mt, _mm512_subs_epu16(mc, _mm512_set1_epi16(1536)));
  const __m512i m = _mm512_or_si512(_mm512_srli_epi16(mt, 3), _mm512_set1_epi16(1024));
  const __m512i shift = _mm512_sub_epi16(_mm512_srli_epi16(lns, 11), exponent);
  return _mm512_sllv_epi16(m, shift);
}

// Two blocks' 24 digit bytes (and 8 endpoint bytes, whose inputs are 0) against 32 inputs:
// digits d0 = b % 6, d1 = (b / 6) % 6, d2 = b / 36 in 16-bit lanes, offset to their block's
// palette, looked up and multiplied into the three planes' accumulators.
inline void int_half(__m256i raw, __m512i slot, __m512i pal, const int16_t* q, __m512i acc[3]) {
  const __m512i b = _mm512_cvtepu8_epi16(raw);
  const __m512i sixth = _mm512_set1_epi16(10923), k6 = _mm512_set1_epi16(6);
  const __m512i q1 = _mm512_mulhi_epu16(b, sixth);
  const __m512i q2 = _mm512_mulhi_epu16(q1, sixth);
  const __m512i d0 = _mm512_or_si512(_mm512_sub_epi16(b, _mm512_mullo_epi16(q1, k6)), slot);
  const __m512i d1 = _mm512_or_si512(_mm512_sub_epi16(q1, _mm512_mullo_epi16(q2, k6)), slot);
  const __m512i d2 = _mm512_or_si512(q2, slot);
  const __m512i x = _mm512_loadu_si512(q);
  acc[0] = _mm512_dpwssd_epi32(acc[0], _mm512_permutexvar_epi16(d0, pal), x);
  acc[1] = _mm512_dpwssd_epi32(acc[1], _mm512_permutexvar_epi16(d1, pal), x);
  acc[2] = _mm512_dpwssd_epi32(acc[2], _mm512_permutexvar_epi16(d2, pal), x);
}

void avx512_row_q(const astc::LaneBlock* blocks, const uint16_t* offsets, const float* sums,
                  int64_t tile_cols, int exponent, const int16_t* qpat, const float* scales,
                  float out[kTile]) {
  const IntConstants& c = int_constants();
  const __m512i e = _mm512_set1_epi16(static_cast<int16_t>(exponent));
  __m512 f[3] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
  for (int64_t g = 0; g * kGroupTiles < tile_cols; ++g) {
    __m512i acc[3] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512()};
    const int64_t end = std::min<int64_t>(tile_cols, (g + 1) * kGroupTiles);
    for (int64_t tc = g * kGroupTiles; tc < end; tc += 4) {
      // A last step of fewer than four blocks reads zeros for the rest: zero palettes.
      const int64_t n = std::min<int64_t>(4, end - tc);
      const __mmask64 m = n == 4 ? ~__mmask64{0} : (__mmask64{1} << (16 * n)) - 1;
      const __m512i raw = _mm512_maskz_loadu_epi8(m, blocks + tc);
      const __m512i pal = int_palettes(raw, e, c);
      int_half(_mm512_castsi512_si256(raw), c.slots[0], pal, qpat + tc * kQpatLanes, acc);
      int_half(_mm512_extracti64x4_epi64(raw, 1), c.slots[1], pal, qpat + (tc + 2) * kQpatLanes, acc);
    }
    const __m512 s = _mm512_set1_ps(scales[g]);
    for (int d = 0; d < 3; ++d) f[d] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[d]), s, f[d]);
  }
  const float offset_sum = offsets_term(offsets, sums, tile_cols);
  const float scale = std::ldexp(1.0f, exponent - 25);
  // Plane d's 32-bit lane i of either block holds texels 12 d + 2 i and + 1: rows 2 d (i < 3)
  // and 2 d + 1 (i = 3..5); lanes 6 and 7 met zero inputs.
  for (int d = 0; d < 3; ++d) {
    const __m256 both = _mm256_add_ps(_mm512_castps512_ps256(f[d]), _mm512_extractf32x8_ps(f[d], 1));
    alignas(32) float l[8];
    _mm256_store_ps(l, both);
    out[2 * d] = offset_sum + ((l[0] + l[1]) + l[2]) * scale;
    out[2 * d + 1] = offset_sum + ((l[3] + l[4]) + l[5]) * scale;
  }
}

#endif

#endif

}  // namespace

const AstcLaneKernels* astc_lane_kernels_avx512_vnni() {
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512VNNI__)
  const AstcLaneKernels* avx512 = astc_lane_kernels_avx512();
  if (avx512 == nullptr) return nullptr;
  static const AstcLaneKernels k{avx512->row, avx512->exception, avx512->decode, avx512->tile_product,
                                 avx512_row_q};
  return &k;
#else
  return nullptr;
#endif
}

const AstcLaneKernels* astc_lane_kernels_avx512() {
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
  const AstcLaneKernels* avx2 = astc_lane_kernels_avx2();
  if (avx2 == nullptr) return nullptr;
  static const AstcLaneKernels k{avx512_row, avx2->exception, avx2->decode, avx2->tile_product, nullptr};
  return &k;
#else
  return nullptr;
#endif
}

}  // namespace afm::cpu
