// AVX2 kernels for q8_0 / q4_0 weights in the 16-row interleaved layout (gemm.h,
// InterleavedKernels), for decode and batches on CPUs without AVX-512.
//
// A register holds one value per row (rows 8h .. 8h+7 of a group, h = 0 or 1, the upper or
// lower 32 bytes of each 64-byte word), so a block's integer dot product for eight rows is a few
// vpmaddubsw with no horizontal sum, one conversion and one fma per token; the tokens of a
// batch share each loaded word. Every row's sum is exact per block, then fma'd with d_w * d_a
// block after block: the arithmetic of the register tiles in gemm_avx2.cpp, so every output is
// bit-identical to theirs, for any batch.
#include "backend/cpu/gemm.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

#include "quant/block_formats.h"

namespace afm::cpu {
namespace {

#include "backend/cpu/avx2_helpers.inc"
#include "backend/cpu/float_rows.inc"
#include "backend/cpu/interleaved_layout.inc"

// Blocks per pass of one half: L1-sized (16 x 544 bytes for q8_0), and even, so that a chunk
// holds whole pairs of blocks.
constexpr int kChunk = 16;
// Decode (one token) asks for each block's lines kAvx2DecodePrefetchBytes ahead into L1
// (gemm.h: on an AVX2-only host the hardware prefetcher alone fell short of the read
// bandwidth). A batch, with several times the arithmetic per byte, asks for them this far ahead
// into L1 and kFarPrefetchBytes ahead into L2 (gemm.h), as before the layout changed: without
// them 16-token verification passes ran ~20% slower.
constexpr int kPrefetchBytes = 4096;

// The layout for n_rows rows (a multiple of 16); plain moves, at load only.
template <bool kQ4>
void interleave(const void* w, size_t wrb, int64_t n_rows, int64_t k, void* out) {
  const int64_t nb = k / 32;
  for (int64_t g0 = 0; g0 + kGroupRows <= n_rows; g0 += kGroupRows) {
    const auto* rows = static_cast<const uint8_t*>(w) + static_cast<size_t>(g0) * wrb;
    uint8_t* group = static_cast<uint8_t*>(out) + static_cast<size_t>(g0) * wrb;
    for (int64_t b = 0; b < nb; ++b) {
      const BlockPlace place = block_place<kQ4>(b, nb);
      uint8_t* words = group + place.words;
      for (int r = 0; r < kGroupRows; ++r) {
        const uint8_t* row = rows + r * wrb;
        uint32_t word[8];
        uint16_t d;
        if constexpr (kQ4) {
          const auto& blk = reinterpret_cast<const quant::BlockQ4_0*>(row)[b];
          std::memcpy(word, blk.qs, 16);
          d = blk.d;
        } else {
          const auto& blk = reinterpret_cast<const quant::BlockQ8_0*>(row)[b];
          std::memcpy(word, blk.q, 32);
          for (uint32_t& v : word) v ^= 0x80808080u;  // q + 128: unsigned codes
          d = blk.d;
        }
        for (int g = 0; g < kWordBytes<kQ4> / 64; ++g) std::memcpy(words + 64 * g + 4 * r, &word[g], 4);
        std::memcpy(group + place.scales + 2 * r, &d, 2);
      }
    }
  }
}

// Float groups of 16-bit values (gemm.h) in the AVX2 set's pieces (float_rows.inc).
void interleave_16bit(const void* w, size_t wrb, int64_t n_rows, int64_t k, void* out) {
  interleave_float_groups<GroupRowsOf<kAvx2PieceValues>>(w, wrb, n_rows, k, out);
}

inline __m256i act_word(const ActBlock& a, int g) {
  int32_t four;
  std::memcpy(&four, a.q + 4 * g, 4);
  return _mm256_set1_epi32(four);
}

// Block b of one group half (eight rows, one per lane) against T tokens: each token's exact
// integer dot product per row. q4_0: the eight vpmaddubsw results of a block stay in int16
// (8 x 2 x 15 x 128 < 2^15) and meet vpmaddwd once; q8_0 sums eight int32 words.
template <bool kQ4, int T>
inline void block_dots(const uint8_t* wb, const ActBlock* const (&a)[T], int64_t b, __m256i (&dot)[T]) {
  if constexpr (kQ4) {
    const __m256i low = _mm256_set1_epi8(0x0f);
    __m256i s16[T];
    for (int t = 0; t < T; ++t) s16[t] = _mm256_setzero_si256();
    // Word j's low nibbles are values 4j .. (lane j), its high nibbles values 16 + 4j ...
    for (int j = 0; j < 4; ++j) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + 64 * j));
      const __m256i lo = _mm256_and_si256(v, low);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
      for (int t = 0; t < T; ++t) {
        s16[t] = _mm256_add_epi16(s16[t], _mm256_maddubs_epi16(lo, act_word(a[t][b], j)));
        s16[t] = _mm256_add_epi16(s16[t], _mm256_maddubs_epi16(hi, act_word(a[t][b], j + 4)));
      }
    }
    for (int t = 0; t < T; ++t) {  // minus the zero point, 8 x sum(a)
      dot[t] = _mm256_add_epi32(_mm256_madd_epi16(s16[t], _mm256_set1_epi16(1)),
                                _mm256_set1_epi32(-8 * a[t][b].sum));
    }
  } else {
    // |w| x (a with w's sign), as the tiles compute it without VNNI.
    const __m256i k128 = _mm256_set1_epi8(static_cast<char>(0x80));
    for (int t = 0; t < T; ++t) dot[t] = _mm256_setzero_si256();
    for (int g = 0; g < 8; ++g) {
      const __m256i q = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + 64 * g)), k128);
      const __m256i q_abs = _mm256_sign_epi8(q, q);
      for (int t = 0; t < T; ++t)
        dot[t] = _mm256_add_epi32(dot[t], dot_u8_s8(q_abs, _mm256_sign_epi8(act_word(a[t][b], g), q)));
    }
  }
}

// acc[t] (rows 8h .. 8h+7 of a group, token t) over blocks [b0, b0 + n) of one group half:
// acc = fma(float(dot), d_w * d_a, acc), block after block, as the tiles.
template <bool kQ4, int T>
inline void half_blocks(const uint8_t* group, int64_t nb, int64_t b0, int64_t n, int h,
                        bool prefetch, const ActBlock* const (&a)[T], __m256 (&acc)[T]) {
  for (int64_t b = b0; b < b0 + n; ++b) {
    const BlockPlace place = block_place<kQ4>(b, nb);
    const uint8_t* wb = group + place.words + 32 * h;
    // The first half brings every line of the block (the second finds them in L1).
    if (h == 0) {
      for (int line = 0; line < kWordBytes<kQ4>; line += 64) {
        const char* at = reinterpret_cast<const char*>(wb) + line;
        if (prefetch) {
          _mm_prefetch(at + kPrefetchBytes, _MM_HINT_T0);
          _mm_prefetch(at + kFarPrefetchBytes, _MM_HINT_T1);
        } else {
          _mm_prefetch(at + kAvx2DecodePrefetchBytes, _MM_HINT_T0);
        }
      }
    }
    const __m256 dw = _mm256_cvtph_ps(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(group + place.scales + 16 * h)));
    __m256i dot[T];
    block_dots<kQ4, T>(wb, a, b, dot);
    for (int t = 0; t < T; ++t) {
      acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[t]), _mm256_mul_ps(dw, _mm256_set1_ps(a[t][b].d)), acc[t]);
    }
  }
}

// T tokens against one group: each half a chunk of blocks at a time, both halves of a chunk in
// turn, so the chunk's lines are read from memory once for the T tokens.
template <bool kQ4, int T>
void group_tokens(const uint8_t* group, int64_t nb, bool prefetch, const uint8_t* x,
                  size_t xrb, float* y, int64_t ys) {
  const ActBlock* a[T];
  for (int t = 0; t < T; ++t) a[t] = reinterpret_cast<const ActBlock*>(x + t * xrb);
  __m256 acc[2][T];
  for (auto& half : acc)
    for (__m256& v : half) v = _mm256_setzero_ps();
  for (int64_t b0 = 0; b0 < nb; b0 += kChunk) {
    const int64_t n = nb - b0 < kChunk ? nb - b0 : kChunk;
    half_blocks<kQ4, T>(group, nb, b0, n, 0, prefetch, a, acc[0]);
    half_blocks<kQ4, T>(group, nb, b0, n, 1, prefetch, a, acc[1]);
  }
  for (int t = 0; t < T; ++t) {
    _mm256_storeu_ps(y + t * ys, acc[0][t]);
    _mm256_storeu_ps(y + t * ys + 8, acc[1][t]);
  }
}

// Tokens kTokens at a time (each loaded weight serves them all), the rest 1-3 at once.
constexpr int kTokens = 4;

template <bool kQ4>
void gemm_interleaved(const void* w, size_t wrb, int64_t n_rows, const void* x, size_t xrb,
                      int64_t n_tok, int64_t k, float* y, int64_t ys) {
  const int64_t nb = k / 32;
  const auto* xb = static_cast<const uint8_t*>(x);
  for (int64_t g0 = 0; g0 + kGroupRows <= n_rows; g0 += kGroupRows) {
    const uint8_t* group = static_cast<const uint8_t*>(w) + static_cast<size_t>(g0) * wrb;
    const bool prefetch = n_tok > 1;
    int64_t t = 0;
    for (; t + kTokens <= n_tok; t += kTokens)
      group_tokens<kQ4, kTokens>(group, nb, prefetch, xb + t * xrb, xrb, y + t * ys + g0, ys);
    switch (n_tok - t) {
      case 3: group_tokens<kQ4, 3>(group, nb, prefetch, xb + t * xrb, xrb, y + t * ys + g0, ys); break;
      case 2: group_tokens<kQ4, 2>(group, nb, prefetch, xb + t * xrb, xrb, y + t * ys + g0, ys); break;
      case 1: group_tokens<kQ4, 1>(group, nb, prefetch, xb + t * xrb, xrb, y + t * ys + g0, ys); break;
      default: break;
    }
  }
}

// Every batch: the token tiles above beat the file layout's register tiles at any size.
constexpr int64_t kMaxTokens = INT64_MAX;

}  // namespace

const InterleavedKernels* avx2_interleaved_kernels_impl() {
  static const InterleavedKernels kernels{interleave<false>, interleave<true>, interleave_16bit,
                                          gemm_interleaved<false>, gemm_interleaved<true>,
                                          kMaxTokens, avx2_float_group_kernels_impl(),
                                          avx2_k_lane_kernels_impl()};
  return &kernels;
}

}  // namespace afm::cpu
#else
namespace afm::cpu {
const InterleavedKernels* avx2_interleaved_kernels_impl() { return nullptr; }
}  // namespace afm::cpu
#endif
