// AVX-512 VNNI kernels for q8_0 / q4_0 weights in the 16-row interleaved layout (gemm.h,
// InterleavedKernels): the same layout as the AVX2 set (whose interleave functions this set
// reuses), read a whole 64-byte word at a time.
//
// Lane r of a 512-bit register is row r of the group, so one vpdpbusd advances all 16 rows of
// a block by four products with no horizontal sum, and a block's scale work (one conversion,
// one multiply, one fma) is paid once per 16 rows. Every row's integer dot product is exact per
// block, then fma'd with d_w * d_a block after block from zero: the arithmetic of this set's
// register tiles and packed path (gemm_avx512.cpp), so every output is bit-identical to theirs
// for any batch.
#include "backend/cpu/gemm.h"

#if defined(__x86_64__) && defined(__AVX512F__) && defined(__AVX512VNNI__)
#include <immintrin.h>

#include <cstring>

namespace afm::cpu {
namespace {

#include "backend/cpu/float_rows.inc"
#include "backend/cpu/interleaved_layout.inc"

// Decode (one token) asks for no lines ahead: the layout is read front to back, which the
// hardware prefetcher follows at the core's read bandwidth on huge pages, and software requests
// only slowed it (docs/engine.md, "Reading weights front to back"). A batch does several times
// the arithmetic per byte, so its first pass over a chunk asks for the lines kPrefetchBytes
// ahead into L1 and kFarPrefetchBytes ahead into L2 (gemm.h), as before the layout changed:
// without them 16-token verification passes ran 25-30% slower.
constexpr int kPrefetchBytes = 4096;

inline __m512i word(const uint8_t* wb, int g) {
  return _mm512_loadu_si512(reinterpret_cast<const void*>(wb + 64 * g));
}

// Four activation codes 4g .. 4g+3 in every lane.
inline __m512i act_word(const ActBlock& a, int g) {
  int32_t four;
  std::memcpy(&four, a.q + 4 * g, 4);
  return _mm512_set1_epi32(four);
}

// Block b (words at wb) against T tokens: each row's exact integer dot product, per token.
// q8_0 words hold q + 128 (unsigned), so vpdpbusd sums (q + 128) a and 128 * sum(a) comes off;
// q4_0 nibbles are q + 8, so 8 * sum(a) comes off. Two accumulators per token halve the
// vpdpbusd dependency chain.
template <bool kQ4, int T>
inline void block_dots(const uint8_t* wb, const ActBlock* const (&a)[T], int64_t b, __m512i (&dot)[T]) {
  __m512i even[T], odd[T];
  for (int t = 0; t < T; ++t) {
    even[t] = _mm512_set1_epi32(-(kQ4 ? 8 : 128) * a[t][b].sum);
    odd[t] = _mm512_setzero_si512();
  }
  if constexpr (kQ4) {
    // Word j's low nibbles are values 4j .. 4j+3 of each row, its high nibbles 16 + 4j ...
    const __m512i low = _mm512_set1_epi8(0x0f);
    for (int j = 0; j < 4; ++j) {
      const __m512i v = word(wb, j);
      const __m512i lo = _mm512_and_si512(v, low);
      const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), low);
      for (int t = 0; t < T; ++t) {
        even[t] = _mm512_dpbusd_epi32(even[t], lo, act_word(a[t][b], j));
        odd[t] = _mm512_dpbusd_epi32(odd[t], hi, act_word(a[t][b], j + 4));
      }
    }
  } else {
    for (int g = 0; g < 8; g += 2) {
      const __m512i w0 = word(wb, g), w1 = word(wb, g + 1);
      for (int t = 0; t < T; ++t) {
        even[t] = _mm512_dpbusd_epi32(even[t], w0, act_word(a[t][b], g));
        odd[t] = _mm512_dpbusd_epi32(odd[t], w1, act_word(a[t][b], g + 1));
      }
    }
  }
  for (int t = 0; t < T; ++t) dot[t] = _mm512_add_epi32(even[t], odd[t]);
}

// Blocks [b0, b0 + n) of one 16-row group: the unit every token of a batch passes over while its
// words stay in L1.
struct Chunk {
  const uint8_t* group;
  int64_t nb;  // the group's blocks
  int64_t b0, n;
  bool first;  // b0 == 0: accumulators start from zero, otherwise from y
};

// A chunk against T tokens: acc = fma(float(dot), d_w * d_a, acc), block after block; each
// loaded word serves all T tokens. `prefetch`: a batch's first pass over the chunk (later passes
// find the lines already requested; decode asks for none, see kPrefetchBytes).
template <bool kQ4, int T>
void chunk_tokens(const Chunk& c, bool prefetch, const uint8_t* x, size_t xrb, float* y, int64_t ys) {
  const ActBlock* a[T];
  for (int t = 0; t < T; ++t) a[t] = reinterpret_cast<const ActBlock*>(x + t * xrb);
  __m512 acc[T];
  for (int t = 0; t < T; ++t) acc[t] = c.first ? _mm512_setzero_ps() : _mm512_loadu_ps(y + t * ys);
  for (int64_t b = c.b0; b < c.b0 + c.n; ++b) {
    const BlockPlace place = block_place<kQ4>(b, c.nb);
    const uint8_t* wb = c.group + place.words;
    if (prefetch) {
      for (int line = 0; line < kWordBytes<kQ4>; line += 64) {
        _mm_prefetch(reinterpret_cast<const char*>(wb) + kPrefetchBytes + line, _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(wb) + kFarPrefetchBytes + line, _MM_HINT_T1);
      }
    }
    const __m512 dw =
        _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(c.group + place.scales)));
    __m512i dot[T];
    block_dots<kQ4, T>(wb, a, b, dot);
    for (int t = 0; t < T; ++t) {
      acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[t]), _mm512_mul_ps(dw, _mm512_set1_ps(a[t][b].d)), acc[t]);
    }
  }
  for (int t = 0; t < T; ++t) _mm512_storeu_ps(y + t * ys, acc[t]);
}

// Tokens kTokens at a time (each loaded word serves them all), the rest 1-3 at once.
constexpr int kTokens = 4;
// Blocks per pass over the batch: a chunk's words stay in L1 (32 x 544 bytes for q8_0) while
// every token reads them, as the packed path's repacked chunks do. Even, so that a chunk holds
// whole pairs of blocks.
constexpr int64_t kChunk = 32;

template <bool kQ4>
void gemm_interleaved(const void* w, size_t wrb, int64_t n_rows, const void* x, size_t xrb,
                      int64_t n_tok, int64_t k, float* y, int64_t ys) {
  const int64_t nb = k / 32;
  const auto* xb = static_cast<const uint8_t*>(x);
  for (int64_t g0 = 0; g0 + kGroupRows <= n_rows; g0 += kGroupRows) {
    const uint8_t* group = static_cast<const uint8_t*>(w) + static_cast<size_t>(g0) * wrb;
    for (int64_t b0 = 0; b0 < nb; b0 += kChunk) {
      const Chunk c{group, nb, b0, nb - b0 < kChunk ? nb - b0 : kChunk, b0 == 0};
      int64_t t = 0;
      for (; t + kTokens <= n_tok; t += kTokens)
        chunk_tokens<kQ4, kTokens>(c, t == 0, xb + t * xrb, xrb, y + t * ys + g0, ys);
      const bool prefetch = t == 0 && n_tok > 1;  // a batch's first pass; never decode
      switch (n_tok - t) {
        case 3: chunk_tokens<kQ4, 3>(c, prefetch, xb + t * xrb, xrb, y + t * ys + g0, ys); break;
        case 2: chunk_tokens<kQ4, 2>(c, prefetch, xb + t * xrb, xrb, y + t * ys + g0, ys); break;
        case 1: chunk_tokens<kQ4, 1>(c, prefetch, xb + t * xrb, xrb, y + t * ys + g0, ys); break;
        default: break;
      }
    }
  }
}

// Float groups of 16-bit values (gemm.h) in the AVX-512 set's pieces (float_rows.inc).
void interleave_16bit(const void* w, size_t wrb, int64_t n_rows, int64_t k, void* out) {
  interleave_float_groups<GroupRowsOf<kAvx512PieceValues>>(w, wrb, n_rows, k, out);
}

// Every batch: with the chunks above this is the packed path without its repack.
constexpr int64_t kMaxTokens = INT64_MAX;

}  // namespace

const InterleavedKernels* avx512_interleaved_kernels_impl() {
  const InterleavedKernels* avx2 = avx2_interleaved_kernels_impl();
  if (avx2 == nullptr) return nullptr;
  static const InterleavedKernels kernels{avx2->interleave_q8_0, avx2->interleave_q4_0,
                                          interleave_16bit, gemm_interleaved<false>,
                                          gemm_interleaved<true>, kMaxTokens,
                                          avx512_float_group_kernels_impl(),
                                          avx512_k_lane_kernels_impl()};
  return &kernels;
}

}  // namespace afm::cpu
#else
namespace afm::cpu {
const InterleavedKernels* avx512_interleaved_kernels_impl() { return nullptr; }
}  // namespace afm::cpu
#endif
