// AVX2 + FMA + F16C kernels for the K-quant types of the files people download (q4_k and q6_k
// in Q4_K_M, q5_k in Q5_K_M, q6_k in Q6_K), for CPUs without AVX-512 (AMD Zen 2 / 3, most
// desktop Intel parts). The scalar set (gemm_ggml_scalar.cpp) is their reference and serves
// the other read-only types.
//
// A 256-value super-block meets eight 32-value activation blocks; each of its eight 32-value
// sub-blocks j is one 256-bit register of unsigned codes against activation block j:
//   vpmaddubsw (u8 codes x s8 activations -> s16 pairs; codes <= 63, so no pair saturates) and
//   vpmaddwd by ones give eight int32 lanes, lane i summing values 4i .. 4i+3 exactly;
// then one fma per sub-block with the lane's float scale (A of its group x d_a of the block):
//   q4_k / q5_k: one A_j per sub-block, weight = A_j q - B_j; the B part is d_a * sum(a) * B_j,
//     subtracted once per super-block with one vector multiply-add;
//   q6_k: q in 0..63 stands for q - 32 (the lanes subtract 32 x their activation sums, shared by
//     a tile's rows); A per group of 16 values: lanes 0-3 take group 2j, lanes 4-7 group 2j + 1.
// Register tiles only (4 rows x 2 tokens), so every call is per-token exact: each token's
// outputs are those of a call with that token alone.
#include "backend/cpu/gemm.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "quant/k_quants.h"

namespace afm::cpu {
namespace {

#include "backend/cpu/avx2_helpers.inc"

constexpr int kPrefetchBytes = 1024;

// d_a of the super-block's eight activation blocks, and their masses d_a * sum(a).
inline void token_scales(const ActBlock* a, __m256& d, __m256& mass) {
  d = _mm256_setr_ps(a[0].d, a[1].d, a[2].d, a[3].d, a[4].d, a[5].d, a[6].d, a[7].d);
  const __m256i sum = _mm256_setr_epi32(a[0].sum, a[1].sum, a[2].sum, a[3].sum, a[4].sum, a[5].sum,
                                        a[6].sum, a[7].sum);
  mass = _mm256_mul_ps(d, _mm256_cvtepi32_ps(sum));
}

// q4_k / q5_k: [A_0 .. A_7] and [B_0 .. B_7] from the twelve packed 6-bit scale / min bytes
// p0..p11 (quant::unpack_scales_6bit), in vector registers (the 16-byte load reads 4 bytes of
// the block past the scales):
//   scale 0-3 = p0-3 & 63                min 0-3 = p4-7 & 63
//   scale 4-7 = (p8-11 & 15) | (p0-3 >> 6) << 4
//   min 4-7   = (p8-11 >> 4) | (p4-7 >> 6) << 4
inline void affine_scales(const uint8_t* p, uint16_t d, uint16_t dmin, __m256& a, __m256& b) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i lo = _mm_shuffle_epi8(v, _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11));
  const __m128i hi = _mm_shuffle_epi8(v, _mm_setr_epi8(-1, -1, -1, -1, 0, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, 7));
  const __m128i low = _mm_or_si128(
      _mm_and_si128(lo, _mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0)),
      _mm_and_si128(_mm_srli_epi16(lo, 4), _mm_setr_epi32(0, 0, 0, 0x0f0f0f0f)));
  const __m128i high = _mm_and_si128(_mm_srli_epi16(hi, 2), _mm_setr_epi32(0, 0x30303030, 0, 0x30303030));
  const __m128i bytes = _mm_or_si128(low, high);  // scale 0-7, min 0-7
  a = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes)), _mm256_set1_ps(_cvtsh_ss(d)));
  b = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(bytes, 8))),
                    _mm256_set1_ps(_cvtsh_ss(dmin)));
}

inline __m256i low_nibbles(__m256i v) { return _mm256_and_si256(v, _mm256_set1_epi8(0x0f)); }

// Sub-block j's 32 nibbles: the low nibbles of qs[32 (j / 2) ..] for even j, the high ones for odd.
inline __m256i affine_nibbles(const uint8_t* qs, int j) {
  const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * (j / 2)));
  return low_nibbles(j % 2 == 0 ? raw : _mm256_srli_epi16(raw, 4));
}

// One scale per sub-block: the row-and-token factors A_j d_aj, one float each.
struct PerSubBlock {
  static constexpr int kFactors = 8;
  static __m256 lane_factors(const float* f, int j) { return _mm256_broadcast_ss(f + j); }
};

struct Q4K : PerSubBlock {
  using Block = quant::BlockQ4_K;
  static constexpr bool kOffsets = true;
  static constexpr int kCenter = 0;
  static void scales(const Block* b, __m256& a, __m256& off) { affine_scales(b->scales, b->d, b->dmin, a, off); }
  static __m256i codes(const Block* b, int j) { return affine_nibbles(b->qs, j); }
};

// The fifth bit of sub-block j's value l is bit j of qh[l]: a 16-bit shift right by j puts it at
// bit 0 of its own byte (j <= 7), a shift left by 4 at bit 4.
struct Q5K : PerSubBlock {
  using Block = quant::BlockQ5_K;
  static constexpr bool kOffsets = true;
  static constexpr int kCenter = 0;
  static void scales(const Block* b, __m256& a, __m256& off) { affine_scales(b->scales, b->d, b->dmin, a, off); }
  static __m256i codes(const Block* b, int j) {
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b->qh));
    const __m256i bit = _mm256_slli_epi16(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(j)), 4);
    return _mm256_or_si256(affine_nibbles(b->qs, j), _mm256_and_si256(bit, _mm256_set1_epi8(16)));
  }
};

// q6_k: sixteen 16-value groups with an int8 scale each, no offsets, centre 32. Sub-block j =
// half h = j / 4, quarter s = j % 4 (values 128 h + 32 s ..): low nibbles of ql[64 h + 32 (s % 2)
// ..] (shifted down for s >= 2), high two bits at bits 2s of qh[32 h ..].
struct Q6K {
  using Block = quant::BlockQ6_K;
  static constexpr bool kOffsets = false;
  static constexpr int kCenter = 32;
  static constexpr int kFactors = 16;
  static void scales(const Block* b, __m256& lo, __m256& hi) {
    const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b->scales));
    const __m256 d = _mm256_set1_ps(_cvtsh_ss(b->d));
    lo = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(sc)), d);
    hi = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(sc, 8))), d);
  }
  static __m256i codes(const Block* b, int j) {
    const int h = j / 4, s = j % 4;
    const __m256i ql = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b->ql + 64 * h + 32 * (s % 2)));
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b->qh + 32 * h));
    const __m256i low = low_nibbles(s >= 2 ? _mm256_srli_epi16(ql, 4) : ql);
    const __m256i high = _mm256_slli_epi16(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * s)), 4);
    return _mm256_or_si256(low, _mm256_and_si256(high, _mm256_set1_epi8(0x30)));
  }
  // Factors of groups 2j (lanes 0-3) and 2j + 1 (lanes 4-7).
  static __m256 lane_factors(const float* f, int j) {
    const __m256 pair = _mm256_castpd_ps(_mm256_broadcast_sd(reinterpret_cast<const double*>(f + 2 * j)));
    return _mm256_permutevar8x32_ps(pair, _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1));
  }
};

// Row r x token c factors of one super-block (kFactors floats): A x d_a of the group's block.
template <class Codec>
inline void row_token_factors(__m256 a_lo, __m256 a_hi, __m256 d, float* out) {
  if constexpr (Codec::kFactors == 8) {
    _mm256_storeu_ps(out, _mm256_mul_ps(a_lo, d));
  } else {  // groups 2i and 2i + 1 share block i
    const __m256 d_lo = _mm256_permutevar8x32_ps(d, _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3));
    const __m256 d_hi = _mm256_permutevar8x32_ps(d, _mm256_setr_epi32(4, 4, 5, 5, 6, 6, 7, 7));
    _mm256_storeu_ps(out, _mm256_mul_ps(a_lo, d_lo));
    _mm256_storeu_ps(out + 8, _mm256_mul_ps(a_hi, d_hi));
  }
}

template <class Codec, int R, int C>
inline void k_tile(const uint8_t* w, size_t wrb, const uint8_t* x, size_t xrb, int64_t nsb,
                   float* y, int64_t ys) {
  using Block = typename Codec::Block;
  __m256 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  alignas(32) float factors[R][C][Codec::kFactors];
  for (int64_t sb = 0; sb < nsb; ++sb) {
    const Block* blk[R];
    __m256 a_lo[R], a_hi[R];
    for (int r = 0; r < R; ++r) {
      blk[r] = reinterpret_cast<const Block*>(w + r * wrb) + sb;
      for (int line = 0; line < static_cast<int>(sizeof(Block)); line += 64) {
        _mm_prefetch(reinterpret_cast<const char*>(blk[r]) + kPrefetchBytes + line, _MM_HINT_T0);
      }
      Codec::scales(blk[r], a_lo[r], a_hi[r]);
    }
    for (int c = 0; c < C; ++c) {
      __m256 d, mass;
      token_scales(reinterpret_cast<const ActBlock*>(x + c * xrb) + 8 * sb, d, mass);
      for (int r = 0; r < R; ++r) {
        row_token_factors<Codec>(a_lo[r], a_hi[r], d, factors[r][c]);
        // q4_k / q5_k: a_hi holds B_j; subtract sum_j B_j d_aj sum(a_j) in any lanes (all
        // lanes are summed at the end).
        if constexpr (Codec::kOffsets) acc[r][c] = _mm256_fnmadd_ps(a_hi[r], mass, acc[r][c]);
      }
    }
    for (int j = 0; j < 8; ++j) {
      __m256i codes[R];
      for (int r = 0; r < R; ++r) codes[r] = Codec::codes(blk[r], j);
      for (int c = 0; c < C; ++c) {
        const auto* a = reinterpret_cast<const ActBlock*>(x + c * xrb) + 8 * sb + j;
        const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a->q));
        __m256i centre = _mm256_setzero_si256();
        if constexpr (Codec::kCenter != 0) {
          static_assert(Codec::kCenter == 32);  // 32 x the lanes' activation sums, as a shift
          centre = _mm256_slli_epi32(dot_u8_s8(_mm256_set1_epi8(1), xv), 5);
        }
        for (int r = 0; r < R; ++r) {
          const __m256i s = _mm256_sub_epi32(dot_u8_s8(codes[r], xv), centre);
          acc[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), Codec::lane_factors(factors[r][c], j), acc[r][c]);
        }
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) y[c * ys + r] = hsum256(acc[r][c]);
}

#include "backend/cpu/gemm_drive.inc"

AFM_TILE_ADAPTER(Q4KTile, k_tile, 4, 2, Q4K,)
AFM_TILE_ADAPTER(Q5KTile, k_tile, 4, 2, Q5K,)
AFM_TILE_ADAPTER(Q6KTile, k_tile, 4, 2, Q6K,)
#undef AFM_TILE_ADAPTER

template <template <int, int> class Tile>
void gemm_super_blocks(const void* w, size_t wrb, int64_t nr, const void* x, size_t xrb,
                       int64_t nt, int64_t k, float* y, int64_t ys) {
  drive<Tile>(w, wrb, nr, x, xrb, nt, k / 256, y, ys);
}

}  // namespace

const GgmlBlockKernels* avx2_ggml_block_kernels_impl() {
  const GgmlBlockKernels& s = scalar_ggml_block_kernels();
  static const GgmlBlockKernels kernels{s.q4_1, s.q5_0, s.q5_1, s.q2_k, s.q3_k,
                                        gemm_super_blocks<Q4KTile>, gemm_super_blocks<Q5KTile>,
                                        gemm_super_blocks<Q6KTile>};
  return &kernels;
}

}  // namespace afm::cpu
#else
namespace afm::cpu {
const GgmlBlockKernels* avx2_ggml_block_kernels_impl() { return nullptr; }
}  // namespace afm::cpu
#endif
