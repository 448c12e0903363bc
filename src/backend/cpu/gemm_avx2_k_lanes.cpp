// AVX2 kernels for q4_k / q6_k weights in the 16-row lanes layout (k_quant_lanes.h), against
// ActBlock256 rows (one activation scale per super-block and the sums of each 16 codes, as this
// set's file-layout K-quant kernels take).
//
// A register holds eight rows (rows 8h .. 8h+7 of a group: bytes 32h .. 32h+31 of each 64-byte
// word), a 32-bit lane per row. With one activation scale per super-block the whole
// super-block stays in integers, with no horizontal sum:
//   vpmaddubsw (codes x activation bytes -> int16 pairs) added in int16 (q4_k: eight of them,
//   |sum| <= 8 x 2 x 15 x 127 = 30,480; q6_k: two, <= 2 x 2 x 63 x 127 = 32,004), then one
//   vpmaddwd by the sub-block's (q6_k: group's) integer scale in both int16 halves of each lane
//   sums the pair and scales it; q4_k's mins meet the activation sums of their sub-blocks in
//   vpmaddwd as well, q6_k's centre (codes are q + 32) the sums of its groups.
// A super-block then costs one or two conversions and fmas per eight rows. Each token's
// operations are the same whatever the other tokens of the call, so every call is per-token
// exact; the rounding is not the file-layout tiles' (outputs agree to float rounding).
#include "backend/cpu/gemm.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "backend/cpu/k_quant_lanes.h"

namespace afm::cpu {
namespace {

constexpr int kHalfRows = 8;

inline __m256i load256(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline __m128i load64(const uint8_t* p) { return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)); }

// Eight f16 values at p as floats.
inline __m256 halves8(const uint8_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }

// Activation codes 4 g .. 4 g + 3 of q in every lane.
inline __m256i act_word(const int8_t* q, int g) {
  int32_t four;
  std::memcpy(&four, q + 4 * g, 4);
  return _mm256_set1_epi32(four);
}

// Two int16 values in every 32-bit lane.
inline __m256i pair(int32_t low, int32_t high) {
  return _mm256_set1_epi32(static_cast<int32_t>(static_cast<uint32_t>(low & 0xffff) | static_cast<uint32_t>(high) << 16));
}

// Eight bytes a (one per row) as int16 pairs (a_r, a_r) per lane, unsigned or signed.
template <bool kSigned>
inline __m256i doubled(__m128i a) {
  const __m128i twice = _mm_unpacklo_epi8(a, a);
  return kSigned ? _mm256_cvtepi8_epi16(twice) : _mm256_cvtepu8_epi16(twice);
}

// Eight bytes a and eight bytes b (one per row) as int16 pairs (a_r, b_r) per lane.
template <bool kSigned>
inline __m256i paired(__m128i a, __m128i b) {
  const __m128i both = _mm_unpacklo_epi8(a, b);
  return kSigned ? _mm256_cvtepi8_epi16(both) : _mm256_cvtepu8_epi16(both);
}

inline __m256i low_nibbles(__m256i v) { return _mm256_and_si256(v, _mm256_set1_epi8(0x0f)); }
inline __m256i high_nibbles(__m256i v) { return low_nibbles(_mm256_srli_epi16(v, 4)); }

// q4_k: the sixteen quantities of a super-block's 16 rows (U0..U3 of k_quant_lanes.h) into
// out, quantity Q (scales 0-7, mins 8-15) of row r at byte 16 Q + r.
inline void q4_k_quantities(const uint8_t* p, uint8_t (&out)[256]) {
  const __m256i top = _mm256_set1_epi8(0x30);
  for (int half = 0; half < 2; ++half) {
    const uint8_t* s = p + k_lanes::kQ4KScales + 32 * half;
    const __m256i n0 = load256(s), n1 = load256(s + 64), h = load256(s + 128);
    auto store = [&](int g, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 64 * g + 32 * half), v); };
    store(0, _mm256_or_si256(low_nibbles(n0), _mm256_and_si256(_mm256_slli_epi16(h, 4), top)));
    store(1, _mm256_or_si256(high_nibbles(n0), _mm256_and_si256(_mm256_slli_epi16(h, 2), top)));
    store(2, _mm256_or_si256(low_nibbles(n1), _mm256_and_si256(h, top)));
    store(3, _mm256_or_si256(high_nibbles(n1), _mm256_and_si256(_mm256_srli_epi16(h, 2), top)));
  }
}

// One super-block (p; its quantities unpacked by q4_k_quantities) of rows 8h .. 8h+7 against T
// tokens (a[t]: their activation block).
template <int T>
inline void q4_k_half(const uint8_t* p, const uint8_t (&quantity)[256], int h, const ActBlock256* const (&a)[T],
                      __m256 (&acc)[T]) {
  const uint8_t* rows = quantity + kHalfRows * h;
  __m256i sum[T];
  for (int t = 0; t < T; ++t) sum[t] = _mm256_setzero_si256();
  for (int j = 0; j < 8; ++j) {
    const uint8_t* wb = p + k_lanes::kQ4KCodes + 256 * j + 32 * h;
    __m256i lo[4], hi[4];
    for (int w = 0; w < 4; ++w) {
      const __m256i v = load256(wb + 64 * w);
      lo[w] = low_nibbles(v);
      hi[w] = high_nibbles(v);
    }
    const __m256i scale = doubled<false>(load64(rows + 16 * j));
    for (int t = 0; t < T; ++t) {
      const int8_t* q = a[t]->q + 32 * j;
      __m256i s16 = _mm256_maddubs_epi16(lo[0], act_word(q, 0));
      s16 = _mm256_add_epi16(s16, _mm256_maddubs_epi16(hi[0], act_word(q, 4)));
      for (int w = 1; w < 4; ++w) {
        s16 = _mm256_add_epi16(s16, _mm256_maddubs_epi16(lo[w], act_word(q, w)));
        s16 = _mm256_add_epi16(s16, _mm256_maddubs_epi16(hi[w], act_word(q, 4 + w)));
      }
      sum[t] = _mm256_add_epi32(sum[t], _mm256_madd_epi16(s16, scale));
    }
  }
  const __m256 d = halves8(p + k_lanes::kQ4KD + 2 * kHalfRows * h);
  const __m256 dmin = halves8(p + k_lanes::kQ4KDmin + 2 * kHalfRows * h);
  __m256i mins[4];  // sub-blocks 2i, 2i + 1 as int16 pairs
  for (int i = 0; i < 4; ++i) mins[i] = paired<false>(load64(rows + 16 * (8 + 2 * i)), load64(rows + 16 * (9 + 2 * i)));
  for (int t = 0; t < T; ++t) {
    const int16_t* gs = a[t]->sums;
    __m256i offset = _mm256_setzero_si256();
    for (int i = 0; i < 4; ++i) {
      offset = _mm256_add_epi32(offset, _mm256_madd_epi16(mins[i], pair(gs[4 * i] + gs[4 * i + 1], gs[4 * i + 2] + gs[4 * i + 3])));
    }
    const __m256 da = _mm256_set1_ps(a[t]->d);
    acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum[t]), _mm256_mul_ps(d, da), acc[t]);
    acc[t] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(offset), _mm256_mul_ps(dmin, da), acc[t]);
  }
}

// Bits 2f, 2f + 1 of each byte of hb at bits 4, 5.
template <int f>
inline __m256i high_bits(__m256i hb) {
  const __m256i top = _mm256_set1_epi8(0x30);
  if constexpr (f == 0) return _mm256_and_si256(_mm256_slli_epi16(hb, 4), top);
  if constexpr (f == 1) return _mm256_and_si256(_mm256_slli_epi16(hb, 2), top);
  if constexpr (f == 2) return _mm256_and_si256(hb, top);
  return _mm256_and_si256(_mm256_srli_epi16(hb, 2), top);
}

// q6_k: the super-block's 256 scale bytes (group g's for row r at 16 g + r), read before its
// codes so that the super-block is read front to back (as the AVX-512 kernel,
// gemm_avx512_k_lanes.cpp).
inline void q6_k_scales(const uint8_t* p, uint8_t (&out)[256]) {
  for (int i = 0; i < 8; ++i) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(out + 32 * i), load256(p + k_lanes::kQ6KScales + 32 * i));
  }
}

// One super-block (p; its scales copied by q6_k_scales) of rows 8h .. 8h+7 against T tokens.
template <int T>
inline void q6_k_half(const uint8_t* p, const uint8_t (&scales)[256], int h, const ActBlock256* const (&a)[T],
                      __m256 (&acc)[T]) {
  const uint8_t* rows = scales + kHalfRows * h;  // group g's at rows + 16 g
  __m256i sum[T], centre[T];
  for (int t = 0; t < T; ++t) sum[t] = centre[t] = _mm256_setzero_si256();
  for (int j = 0; j < 8; ++j) {
    const uint8_t* sub = p + k_lanes::kQ6KSubBlocks + k_lanes::kQ6KSubBlockBytes * j + 32 * h;
    const __m256i h0 = load256(sub + k_lanes::kQ6KHighBits), h1 = load256(sub + k_lanes::kQ6KHighBits + 64);
    __m256i lo[4], hi[4];
    for (int w = 0; w < 4; ++w) {
      const __m256i v = load256(sub + 64 * w);
      const __m256i hb = w < 2 ? h0 : h1;
      lo[w] = _mm256_or_si256(low_nibbles(v), w % 2 == 0 ? high_bits<0>(hb) : high_bits<2>(hb));
      hi[w] = _mm256_or_si256(high_nibbles(v), w % 2 == 0 ? high_bits<1>(hb) : high_bits<3>(hb));
    }
    const __m128i sc_lo = load64(rows + 16 * (2 * j)), sc_hi = load64(rows + 16 * (2 * j + 1));
    const __m256i scale_lo = doubled<true>(sc_lo), scale_hi = doubled<true>(sc_hi);
    const __m256i both = paired<true>(sc_lo, sc_hi);
    for (int t = 0; t < T; ++t) {
      const int8_t* q = a[t]->q + 32 * j;
      const __m256i lo01 = _mm256_add_epi16(_mm256_maddubs_epi16(lo[0], act_word(q, 0)), _mm256_maddubs_epi16(lo[1], act_word(q, 1)));
      const __m256i lo23 = _mm256_add_epi16(_mm256_maddubs_epi16(lo[2], act_word(q, 2)), _mm256_maddubs_epi16(lo[3], act_word(q, 3)));
      const __m256i hi01 = _mm256_add_epi16(_mm256_maddubs_epi16(hi[0], act_word(q, 4)), _mm256_maddubs_epi16(hi[1], act_word(q, 5)));
      const __m256i hi23 = _mm256_add_epi16(_mm256_maddubs_epi16(hi[2], act_word(q, 6)), _mm256_maddubs_epi16(hi[3], act_word(q, 7)));
      const __m256i lo_sum = _mm256_add_epi32(_mm256_madd_epi16(lo01, scale_lo), _mm256_madd_epi16(lo23, scale_lo));
      const __m256i hi_sum = _mm256_add_epi32(_mm256_madd_epi16(hi01, scale_hi), _mm256_madd_epi16(hi23, scale_hi));
      sum[t] = _mm256_add_epi32(sum[t], _mm256_add_epi32(lo_sum, hi_sum));
      const int16_t* gs = a[t]->sums;
      centre[t] = _mm256_add_epi32(centre[t], _mm256_madd_epi16(both, pair(gs[2 * j], gs[2 * j + 1])));
    }
  }
  const __m256 d = halves8(p + k_lanes::kQ6KD + 2 * kHalfRows * h);
  for (int t = 0; t < T; ++t) {
    const __m256i centred = _mm256_sub_epi32(sum[t], _mm256_slli_epi32(centre[t], 5));
    acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(centred), _mm256_mul_ps(d, _mm256_set1_ps(a[t]->d)), acc[t]);
  }
}

struct Q4KLanes {
  static constexpr size_t kGroupBlock = k_lanes::kQ4KGroupBlock;
  static void prepare(const uint8_t* p, uint8_t (&scales)[256]) { q4_k_quantities(p, scales); }
  template <int T>
  static void half(const uint8_t* p, const uint8_t (&scales)[256], int h, const ActBlock256* const (&a)[T],
                   __m256 (&acc)[T]) {
    q4_k_half<T>(p, scales, h, a, acc);
  }
};
struct Q6KLanes {
  static constexpr size_t kGroupBlock = k_lanes::kQ6KGroupBlock;
  static void prepare(const uint8_t* p, uint8_t (&scales)[256]) { q6_k_scales(p, scales); }
  template <int T>
  static void half(const uint8_t* p, const uint8_t (&scales)[256], int h, const ActBlock256* const (&a)[T],
                   __m256 (&acc)[T]) {
    q6_k_half<T>(p, scales, h, a, acc);
  }
};

// One 16-row group against T tokens, both halves of each super-block before the next one, so
// that the group is read front to back, each line once. A batch's first pass asks for the
// group's lines kFarPrefetchBytes ahead into L2 (gemm.h); a one-token pass that is not a batch's
// first (decode, or a batch's last lone token, whose lines are already near) asks for them
// kAvx2DecodePrefetchBytes ahead into L1 (gemm.h).
template <class Kind, int T>
void group_tokens(const uint8_t* group, int64_t nsb, const uint8_t* x, size_t xrb, bool prefetch, float* y,
                  int64_t ys) {
  __m256 acc[2][T];
  for (int h = 0; h < 2; ++h)
    for (int t = 0; t < T; ++t) acc[h][t] = _mm256_setzero_ps();
  for (int64_t sb = 0; sb < nsb; ++sb) {
    const ActBlock256* a[T];
    for (int t = 0; t < T; ++t) a[t] = reinterpret_cast<const ActBlock256*>(x + t * xrb) + sb;
    const uint8_t* p = group + sb * Kind::kGroupBlock;
    for (size_t line = 0; line < Kind::kGroupBlock; line += 64) {
      const char* at = reinterpret_cast<const char*>(p) + line;
      if (prefetch) {
        _mm_prefetch(at + kFarPrefetchBytes, _MM_HINT_T1);
      } else if (T == 1) {
        _mm_prefetch(at + kAvx2DecodePrefetchBytes, _MM_HINT_T0);
      }
    }
    alignas(32) uint8_t scales[256];
    Kind::prepare(p, scales);
    for (int h = 0; h < 2; ++h) Kind::template half<T>(p, scales, h, a, acc[h]);
  }
  for (int h = 0; h < 2; ++h)
    for (int t = 0; t < T; ++t) _mm256_storeu_ps(y + t * ys + kHalfRows * h, acc[h][t]);
}

#include "backend/cpu/k_lanes_drive.inc"

// This set's file-layout K-quant kernels are register tiles only (no packed batch path), and
// these run faster at every batch size: one AMD EPYC Zen 4 core with this set (AFM_CPU=avx2,
// bench/gemm_kernel_bench --set avx2 --rows 1024 --k 3072 --tokens T --layout copy|file,
// G values/s) at 4 / 16 / 64 / 512 tokens: q4_k 65 / 94 / 98 / 88 against 42 / 44 / 43 / 55,
// q6_k 66 / 70 / 74 / 72 against 52 / 55 / 43 / 55.
constexpr int64_t kQ4KMaxTokens = INT64_MAX;
constexpr int64_t kQ6KMaxTokens = INT64_MAX;

}  // namespace

const KQuantLaneKernels* avx2_k_lane_kernels_impl() {
  static const KQuantLaneKernels kernels{k_lanes::interleave_q4_k, k_lanes::interleave_q6_k,
                                         gemm_lanes<Q4KLanes>, gemm_lanes<Q6KLanes>,
                                         kQ4KMaxTokens, kQ6KMaxTokens};
  return &kernels;
}

}  // namespace afm::cpu
#else
namespace afm::cpu {
const KQuantLaneKernels* avx2_k_lane_kernels_impl() { return nullptr; }
}  // namespace afm::cpu
#endif
