// AVX2 kernels for q8_0 / q4_0 weights in the 16-row interleaved layout (gemm.h,
// InterleavedKernels), for decode and short batches on CPUs without AVX-512.
//
// The register tiles of gemm_avx2.cpp keep, for each row, eight float lanes: lane i sums
// fma(float(dot of values 4i .. 4i+3), d_w * d_a, .) block after block, and the row's output is
// hsum256 of the eight. Here a register holds one lane of eight rows instead (rows 8h .. 8h+7 of
// a group, h = 0 or 1, the upper or lower 32 bytes of each 64-byte word), so the eight lanes of
// a row become eight accumulators, fed the same integers and the same scales in the same order,
// and summed in hsum256's order at the end: every output is bit-identical to the tiles', for any
// batch. The gain is the work per block: one code load and one scale conversion serve eight
// rows, and no horizontal sums are left inside the loop.
#include "backend/cpu/gemm.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

#include "quant/block_formats.h"

namespace afm::cpu {
namespace {

#include "backend/cpu/avx2_helpers.inc"

constexpr int kGroupRows = 16;
constexpr int kChunk = 16;  // blocks per pass of one half (L1-sized: 16 x 576 bytes for q8_0)
// How far ahead of the block being read its lines are asked for: the hardware prefetcher alone
// left the loop waiting on memory (perf: the first use of each loaded line was the hot spot).
constexpr int kPrefetchBytes = 4096;

template <bool kQ4>
constexpr int kWordBytes = kQ4 ? 256 : 512;  // one block's words for 16 rows

// The layout for n_rows rows (a multiple of 16); plain moves, at load only.
template <bool kQ4>
void interleave(const void* w, size_t wrb, int64_t n_rows, int64_t k, void* out) {
  const int64_t nb = k / 32;
  for (int64_t g0 = 0; g0 + kGroupRows <= n_rows; g0 += kGroupRows) {
    const auto* rows = static_cast<const uint8_t*>(w) + static_cast<size_t>(g0) * wrb;
    uint8_t* words = static_cast<uint8_t*>(out) + static_cast<size_t>(g0) * wrb;
    auto* scales = reinterpret_cast<uint16_t*>(words + nb * kWordBytes<kQ4>);
    for (int64_t b = 0; b < nb; ++b) {
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
        for (int g = 0; g < kWordBytes<kQ4> / 64; ++g) {
          std::memcpy(words + b * kWordBytes<kQ4> + 64 * g + 4 * r, &word[g], 4);
        }
        scales[b * kGroupRows + r] = d;
      }
    }
  }
}

inline __m256i act_word(const ActBlock& a, int g) {
  int32_t four;
  std::memcpy(&four, a.q + 4 * g, 4);
  return _mm256_set1_epi32(four);
}

// acc[i] (lane i of rows 8h ..) over blocks [b0, b0 + n) of one group half.
template <bool kQ4>
inline void half_blocks(const uint8_t* words, const uint16_t* scales, int64_t b0, int64_t n, int h,
                        const ActBlock* a, __m256 acc[8]) {
  const __m256i low = _mm256_set1_epi8(0x0f);
  for (int64_t b = b0; b < b0 + n; ++b) {
    const uint8_t* wb = words + b * kWordBytes<kQ4> + 32 * h;
    if (h == 0) {  // the first half brings every line of the block (the second finds them in L1)
      for (int line = 0; line < kWordBytes<kQ4>; line += 64) {
        _mm_prefetch(reinterpret_cast<const char*>(wb) + kPrefetchBytes + line, _MM_HINT_T0);
      }
      _mm_prefetch(reinterpret_cast<const char*>(scales + b * kGroupRows) + kPrefetchBytes / 8, _MM_HINT_T0);
    }
    const __m256 dw = _mm256_cvtph_ps(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(scales + b * kGroupRows + 8 * h)));
    const __m256 scale = _mm256_mul_ps(dw, _mm256_set1_ps(a[b].d));
    if constexpr (kQ4) {
      // Word j's low nibbles are values 4j .. (lane j), its high nibbles values 16 + 4j .. (lane
      // j + 4); lane 0 carries the zero point, -8 x sum(a), as in the tiles.
      for (int j = 0; j < 4; ++j) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + 64 * j));
        __m256i lo = dot_u8_s8(_mm256_and_si256(v, low), act_word(a[b], j));
        if (j == 0) lo = _mm256_add_epi32(lo, _mm256_set1_epi32(-8 * a[b].sum));
        const __m256i hi = dot_u8_s8(_mm256_and_si256(_mm256_srli_epi16(v, 4), low), act_word(a[b], j + 4));
        acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(lo), scale, acc[j]);
        acc[j + 4] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(hi), scale, acc[j + 4]);
      }
    } else {
      // |w| x (a with w's sign), as the tiles compute it without VNNI.
      const __m256i k128 = _mm256_set1_epi8(static_cast<char>(0x80));
      for (int g = 0; g < 8; ++g) {
        const __m256i q = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + 64 * g)), k128);
        const __m256i s = dot_u8_s8(_mm256_sign_epi8(q, q), _mm256_sign_epi8(act_word(a[b], g), q));
        acc[g] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), scale, acc[g]);
      }
    }
  }
}

// hsum256's order: ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)).
inline __m256 lanes_sum(const __m256 acc[8]) {
  const __m256 s0 = _mm256_add_ps(acc[0], acc[4]), s1 = _mm256_add_ps(acc[1], acc[5]);
  const __m256 s2 = _mm256_add_ps(acc[2], acc[6]), s3 = _mm256_add_ps(acc[3], acc[7]);
  return _mm256_add_ps(_mm256_add_ps(s0, s2), _mm256_add_ps(s1, s3));
}

// One token against every group: each half a chunk of blocks at a time, both halves of a chunk
// in turn, so the chunk's lines are read from memory once.
template <bool kQ4>
void gemm_interleaved(const void* w, size_t wrb, int64_t n_rows, const void* x, size_t xrb,
                      int64_t n_tok, int64_t k, float* y, int64_t ys) {
  const int64_t nb = k / 32;
  for (int64_t g0 = 0; g0 + kGroupRows <= n_rows; g0 += kGroupRows) {
    const uint8_t* words = static_cast<const uint8_t*>(w) + static_cast<size_t>(g0) * wrb;
    const auto* scales = reinterpret_cast<const uint16_t*>(words + nb * kWordBytes<kQ4>);
    for (int64_t t = 0; t < n_tok; ++t) {
      const auto* a = reinterpret_cast<const ActBlock*>(static_cast<const uint8_t*>(x) + t * xrb);
      __m256 acc[2][8];
      for (auto& half : acc)
        for (__m256& v : half) v = _mm256_setzero_ps();
      for (int64_t b0 = 0; b0 < nb; b0 += kChunk) {
        const int64_t n = nb - b0 < kChunk ? nb - b0 : kChunk;
        half_blocks<kQ4>(words, scales, b0, n, 0, a, acc[0]);
        half_blocks<kQ4>(words, scales, b0, n, 1, a, acc[1]);
      }
      _mm256_storeu_ps(y + t * ys + g0, lanes_sum(acc[0]));
      _mm256_storeu_ps(y + t * ys + g0 + 8, lanes_sum(acc[1]));
    }
  }
}

// Batches of more tokens are faster on the tiles (4 x 2 of them reuse each loaded weight).
constexpr int64_t kMaxTokens = 3;

}  // namespace

const InterleavedKernels* avx2_interleaved_kernels_impl() {
  static const InterleavedKernels kernels{interleave<false>, interleave<true>,
                                          gemm_interleaved<false>, gemm_interleaved<true>,
                                          kMaxTokens};
  return &kernels;
}

}  // namespace afm::cpu
#else
namespace afm::cpu {
const InterleavedKernels* avx2_interleaved_kernels_impl() { return nullptr; }
}  // namespace afm::cpu
#endif
