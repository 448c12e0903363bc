// AVX-512 VNNI kernels for q4_k / q6_k weights in the 16-row lanes layout (k_quant_lanes.h),
// against ActBlock rows (32-value activation blocks, as this set's file-layout K-quant kernels).
//
// Lane r of every register is row r of the group. Per 32-value sub-block j and token, eight
// vpdpbusd give each row's exact integer dot product of the sub-block (q6_k: of each of its two
// 16-value groups), and the float work is one conversion and one fma per 16 rows:
//   q4_k: acc += float(dot_j) * (d sc_j * d_a)  then  acc -= (dmin m_j) * (d_a * sum(a)),
//   q6_k: acc += float(dot_g - 32 * sum_g(a)) * (d sc_g * d_a) for g = 2j, 2j + 1,
// with the rows' d sc_j, dmin m_j (d sc_g) made once per sub-block for all tokens. Each token's
// operations are the same whatever the other tokens of the call, so every call is per-token
// exact. The rounding is not the file-layout kernels' (they sum 4-value products in other
// lanes), so outputs agree with them only to float rounding.
#include "backend/cpu/gemm.h"

#if defined(__x86_64__) && defined(__AVX512F__) && defined(__AVX512VNNI__)
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "backend/cpu/k_quant_lanes.h"

namespace afm::cpu {
namespace {

inline __m512i load_word(const uint8_t* p) { return _mm512_loadu_si512(reinterpret_cast<const void*>(p)); }

// The 16 rows' f16 values at p as floats.
inline __m512 row_halves(const uint8_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// Activation codes 4 g .. 4 g + 3 of block a in every lane.
inline __m512i act_word(const ActBlock& a, int g) {
  int32_t four;
  std::memcpy(&four, a.q + 4 * g, 4);
  return _mm512_set1_epi32(four);
}

// (A & 0x0f) | B, one ternary-logic instruction.
inline __m512i low_nibble_or(__m512i a, __m512i b) {
  return _mm512_ternarylogic_epi32(a, b, _mm512_set1_epi8(0x0f), 0xec);
}

// 16 unsigned bytes at p as floats.
inline __m512 bytes_u8(const uint8_t* p) {
  return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
}

// q4_k: the 16 rows' unpacked scales and mins of one super-block, quantity Q (0-7: the scales
// of sub-blocks 0-7, 8-15: their mins) of row r at byte 16 Q + r (U0..U3 of k_quant_lanes.h,
// one after the other), spilled so that each sub-block loads its two quantities directly.
inline void q4_k_quantities(const uint8_t* p, uint8_t (&out)[256]) {
  const __m512i n0 = load_word(p + k_lanes::kQ4KScales), n1 = load_word(p + k_lanes::kQ4KScales + 64);
  const __m512i h = load_word(p + k_lanes::kQ4KScales + 128);
  const __m512i top = _mm512_set1_epi8(0x30);
  _mm512_store_si512(out, low_nibble_or(n0, _mm512_and_si512(_mm512_slli_epi16(h, 4), top)));
  _mm512_store_si512(out + 64, low_nibble_or(_mm512_srli_epi16(n0, 4), _mm512_and_si512(_mm512_slli_epi16(h, 2), top)));
  _mm512_store_si512(out + 128, low_nibble_or(n1, _mm512_and_si512(h, top)));
  _mm512_store_si512(out + 192, low_nibble_or(_mm512_srli_epi16(n1, 4), _mm512_and_si512(_mm512_srli_epi16(h, 2), top)));
}

// Sub-block j of q4_k (words at wb) against T tokens (their activation block j in a[t]).
template <int T>
inline void q4_k_sub_block(const uint8_t* wb, const ActBlock* const (&a)[T], __m512 scale, __m512 min,
                           __m512 (&acc)[T]) {
  __m512i lo[4], hi[4];
  const __m512i nibble = _mm512_set1_epi8(0x0f);
  for (int w = 0; w < 4; ++w) {
    const __m512i v = load_word(wb + 64 * w);
    lo[w] = _mm512_and_si512(v, nibble);
    hi[w] = _mm512_and_si512(_mm512_srli_epi16(v, 4), nibble);
  }
  for (int t = 0; t < T; ++t) {
    __m512i even = _mm512_setzero_si512(), odd = _mm512_setzero_si512();
    for (int w = 0; w < 4; ++w) {
      even = _mm512_dpbusd_epi32(even, lo[w], act_word(*a[t], w));
      odd = _mm512_dpbusd_epi32(odd, hi[w], act_word(*a[t], 4 + w));
    }
    const __m512 dot = _mm512_cvtepi32_ps(_mm512_add_epi32(even, odd));
    acc[t] = _mm512_fmadd_ps(dot, _mm512_mul_ps(scale, _mm512_set1_ps(a[t]->d)), acc[t]);
    acc[t] = _mm512_fnmadd_ps(min, _mm512_set1_ps(a[t]->d * static_cast<float>(a[t]->sum)), acc[t]);
  }
}

// One super-block of a 16-row group (p) against T tokens (a[t]: their 8 activation blocks).
template <int T>
inline void q4_k_super_block(const uint8_t* p, const ActBlock* const (&a)[T], __m512 (&acc)[T]) {
  alignas(64) uint8_t quantity[256];
  q4_k_quantities(p, quantity);
  const __m512 d = row_halves(p + k_lanes::kQ4KD), dmin = row_halves(p + k_lanes::kQ4KDmin);
  for (int j = 0; j < 8; ++j) {
    const __m512 scale = _mm512_mul_ps(bytes_u8(quantity + 16 * j), d);
    const __m512 min = _mm512_mul_ps(bytes_u8(quantity + 16 * (8 + j)), dmin);
    const ActBlock* aj[T];
    for (int t = 0; t < T; ++t) aj[t] = a[t] + j;
    q4_k_sub_block<T>(p + k_lanes::kQ4KCodes + 256 * j, aj, scale, min, acc);
  }
}

// The sums of each half (values 0-15, 16-31) of activation block a's codes.
inline void half_sums(const ActBlock& a, int32_t& lo, int32_t& hi) {
  const __m256i s = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_set1_epi8(1),
                                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.q)));
  // s lanes 0-3 hold values 0-15 four at a time, lanes 4-7 values 16-31.
  __m128i both = _mm_hadd_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
  both = _mm_hadd_epi32(both, both);
  lo = _mm_cvtsi128_si32(both);
  hi = _mm_extract_epi32(both, 1);
}

// Group g's scale (d sc_g) of the 16 rows.
// (scales: the super-block's 256 scale bytes, 16 per group.)
inline __m512 q6_k_scale(const uint8_t* scales, __m512 d, int g) {
  const __m128i sc = _mm_load_si128(reinterpret_cast<const __m128i*>(scales + 16 * g));
  return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(sc)), d);
}

// Puts bits 2f, 2f + 1 of each byte of h at bits 4, 5.
template <int f>
inline __m512i high_bits(__m512i h) {
  const __m512i top = _mm512_set1_epi8(0x30);
  if constexpr (f == 0) return _mm512_and_si512(_mm512_slli_epi16(h, 4), top);
  if constexpr (f == 1) return _mm512_and_si512(_mm512_slli_epi16(h, 2), top);
  if constexpr (f == 2) return _mm512_and_si512(h, top);
  return _mm512_and_si512(_mm512_srli_epi16(h, 2), top);
}

// Sub-block j of q6_k (at sub) against T tokens: groups 2j (low nibbles) and 2j + 1 (high).
template <int T>
inline void q6_k_sub_block(const uint8_t* sub, const ActBlock* const (&a)[T], __m512 scale_lo, __m512 scale_hi,
                           __m512 (&acc)[T]) {
  __m512i lo[4], hi[4];
  const __m512i h0 = load_word(sub + k_lanes::kQ6KHighBits), h1 = load_word(sub + k_lanes::kQ6KHighBits + 64);
  for (int w = 0; w < 4; ++w) {
    const __m512i v = load_word(sub + 64 * w);
    const __m512i h = w < 2 ? h0 : h1;
    // Code c = 2 w (low nibble) sits in field c % 4 of word c / 4, c = 2 w + 1 in the next.
    if (w % 2 == 0) {
      lo[w] = low_nibble_or(v, high_bits<0>(h));
      hi[w] = low_nibble_or(_mm512_srli_epi16(v, 4), high_bits<1>(h));
    } else {
      lo[w] = low_nibble_or(v, high_bits<2>(h));
      hi[w] = low_nibble_or(_mm512_srli_epi16(v, 4), high_bits<3>(h));
    }
  }
  for (int t = 0; t < T; ++t) {
    int32_t sum_lo, sum_hi;
    half_sums(*a[t], sum_lo, sum_hi);
    __m512i dot_lo = _mm512_set1_epi32(-32 * sum_lo), dot_hi = _mm512_set1_epi32(-32 * sum_hi);
    for (int w = 0; w < 4; ++w) {
      dot_lo = _mm512_dpbusd_epi32(dot_lo, lo[w], act_word(*a[t], w));
      dot_hi = _mm512_dpbusd_epi32(dot_hi, hi[w], act_word(*a[t], 4 + w));
    }
    const __m512 da = _mm512_set1_ps(a[t]->d);
    acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot_lo), _mm512_mul_ps(scale_lo, da), acc[t]);
    acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot_hi), _mm512_mul_ps(scale_hi, da), acc[t]);
  }
}

template <int T>
inline void q6_k_super_block(const uint8_t* p, const ActBlock* const (&a)[T], __m512 (&acc)[T]) {
  const __m512 d = row_halves(p + k_lanes::kQ6KD);
  // All the scales first, so that the super-block is read front to back: the sub-blocks
  // reaching back for their groups' scales left one core's decode from DRAM slower than the
  // file layout's kernel (the hardware prefetcher follows a stream, docs/engine.md).
  alignas(64) uint8_t scales[256];
  for (int i = 0; i < 4; ++i) _mm512_store_si512(scales + 64 * i, load_word(p + k_lanes::kQ6KScales + 64 * i));
  for (int j = 0; j < 8; ++j) {
    const ActBlock* aj[T];
    for (int t = 0; t < T; ++t) aj[t] = a[t] + j;
    q6_k_sub_block<T>(p + k_lanes::kQ6KSubBlocks + k_lanes::kQ6KSubBlockBytes * j, aj, q6_k_scale(scales, d, 2 * j),
                      q6_k_scale(scales, d, 2 * j + 1), acc);
  }
}

struct Q4KLanes {
  static constexpr size_t kGroupBlock = k_lanes::kQ4KGroupBlock;
  template <int T>
  static void super_block(const uint8_t* p, const ActBlock* const (&a)[T], __m512 (&acc)[T]) {
    q4_k_super_block<T>(p, a, acc);
  }
};
struct Q6KLanes {
  static constexpr size_t kGroupBlock = k_lanes::kQ6KGroupBlock;
  template <int T>
  static void super_block(const uint8_t* p, const ActBlock* const (&a)[T], __m512 (&acc)[T]) {
    q6_k_super_block<T>(p, a, acc);
  }
};

// One 16-row group (all its super-blocks) against T tokens. A batch's first pass over a group
// asks for its lines kFarPrefetchBytes ahead into L2 (gemm.h); decode asks for none, the
// layout being read front to back. One Zen 4 core, matrices of the Qwen3-0.6B shape streamed
// from DRAM (bench/gemm_kernel_bench --rows 1024 --k 2048 --copies 200 [--tokens 8], three
// alternating runs, the distances read from the environment in a throwaway build): decode
// q4_k 27.6-31.7 GB/s without, 25.4-26.8 with, q6_k 19.1-22.6 against 20.1-22.0; 8 tokens
// q4_k 87-93 G values/s without, 127-133 with, q6_k 53-54 against 69-73 (requests into L1 as
// well, 4 KB ahead, slowed both).
template <class Kind, int T>
void group_tokens(const uint8_t* group, int64_t nsb, const uint8_t* x, size_t xrb, bool prefetch, float* y,
                  int64_t ys) {
  __m512 acc[T];
  for (int t = 0; t < T; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t sb = 0; sb < nsb; ++sb) {
    const ActBlock* a[T];
    for (int t = 0; t < T; ++t) a[t] = reinterpret_cast<const ActBlock*>(x + t * xrb) + 8 * sb;
    const uint8_t* p = group + sb * Kind::kGroupBlock;
    if (prefetch) {
      for (size_t line = 0; line < Kind::kGroupBlock; line += 64) {
        _mm_prefetch(reinterpret_cast<const char*>(p) + kFarPrefetchBytes + line, _MM_HINT_T1);
      }
    }
    Kind::template super_block<T>(p, a, acc);
  }
  for (int t = 0; t < T; ++t) _mm512_storeu_ps(y + t * ys, acc[t]);
}

#include "backend/cpu/k_lanes_drive.inc"

// Where the file layout's packed batch path (gemm_ggml_avx512_packed.inc) overtakes these
// kernels, one Zen 4 core (bench/gemm_kernel_bench --rows 1024 --k 3072 --tokens T --layout
// copy|file, G values/s): q4_k past 64 tokens (8 / 16 / 32 / 64 / 128 / 512 tokens: 114 / 140 /
// 143 / 144 / 143 / 109 here against 84 / 112 / 126 / 137 / 139 / 143), q6_k past 16 (8 / 16 /
// 32: 81 / 83 / 66 against 72 / 73 / 84).
constexpr int64_t kQ4KMaxTokens = 64;
constexpr int64_t kQ6KMaxTokens = 16;

}  // namespace

const KQuantLaneKernels* avx512_k_lane_kernels_impl() {
  static const KQuantLaneKernels kernels{k_lanes::interleave_q4_k, k_lanes::interleave_q6_k,
                                         gemm_lanes<Q4KLanes>, gemm_lanes<Q6KLanes>,
                                         kQ4KMaxTokens, kQ6KMaxTokens};
  return &kernels;
}

}  // namespace afm::cpu
#else
namespace afm::cpu {
const KQuantLaneKernels* avx512_k_lane_kernels_impl() { return nullptr; }
}  // namespace afm::cpu
#endif
