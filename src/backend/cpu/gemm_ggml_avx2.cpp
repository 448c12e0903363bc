// AVX2 + FMA + F16C kernels for the K-quant types of the files people download (q4_k and q6_k
// in Q4_K_M, q5_k in Q5_K_M, q6_k in Q6_K), for CPUs without AVX-512 (AMD Zen 2 / 3, most
// desktop Intel parts). They take ActBlock256 activations (super_block_activations); their
// reference is scalar_ggml_super_block_kernels (q4_1 / q5_0 / q5_1 run the scalar kernels).
//
// A 256-value super-block meets one activation block. Each of its eight 32-value sub-blocks j
// is one 256-bit register of unsigned codes against activations 32 j .. 32 j + 31:
//   vpmaddubsw (u8 codes x s8 activations -> s16 pairs; codes <= 63, so no pair saturates),
//   then vpmaddwd by the sub-block's integer scales (int16 pairs -> int32: the low 128 bits
//   hold values 0-15 of the sub-block, the high 128 values 16-31, so a q6_k register carries
//   its two 16-value groups' scales in its two halves) adds into eight int32 lanes.
// The super-block's integer sum then meets two floats: d_w d_a for the scaled part and, for
// q4_k / q5_k, dmin d_a x sum_g min_g sums_g (one vpmaddwd of the mins against the block's
// 16-value sums). q6_k's codes stand for q - 32: 32 x sum_g scale_g sums_g leaves the integer
// sum the same way. No float work inside the super-block, no horizontal sum inside the row.
// Register tiles only, so every call is per-token exact: each token's outputs are those of a
// call with that token alone. One row x four tokens: a row's codes and scales, the costly part
// (q6_k's take two loads and six operations per sub-block), serve four tokens, and the
// registers hold the four int32 sums without spilling; 4 x 2 tiles ran prefill at 0.55-0.75x
// this speed and q6_k decode at 0.7x (a kernel benchmark on an AMD Zen 3 core).
#include "backend/cpu/gemm.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

#include "quant/k_quants.h"

namespace afm::cpu {
namespace {

#include "backend/cpu/avx2_helpers.inc"

// The bytes twelve scale bytes p0..p11 of q4_k / q5_k hold (quant::unpack_scales_6bit), in
// one register (the 16-byte load reads 4 bytes of the block past the scales): bytes 0-7 the
// eight 6-bit scales, bytes 8-15 the eight 6-bit mins.
//   scale 0-3 = p0-3 & 63                min 0-3 = p4-7 & 63
//   scale 4-7 = (p8-11 & 15) | (p0-3 >> 6) << 4
//   min 4-7   = (p8-11 >> 4) | (p4-7 >> 6) << 4
inline __m128i affine_scale_bytes(const uint8_t* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i lo = _mm_shuffle_epi8(v, _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11));
  const __m128i hi = _mm_shuffle_epi8(v, _mm_setr_epi8(-1, -1, -1, -1, 0, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, 7));
  const __m128i low = _mm_or_si128(
      _mm_and_si128(lo, _mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0)),
      _mm_and_si128(_mm_srli_epi16(lo, 4), _mm_setr_epi32(0, 0, 0, 0x0f0f0f0f)));
  const __m128i high = _mm_and_si128(_mm_srli_epi16(hi, 2), _mm_setr_epi32(0, 0x30303030, 0, 0x30303030));
  return _mm_or_si128(low, high);
}

inline __m256i low_nibbles(__m256i v) { return _mm256_and_si256(v, _mm256_set1_epi8(0x0f)); }

// Sub-block j's 32 nibbles: the low nibbles of qs[32 (j / 2) ..] for even j, the high ones for odd.
inline __m256i affine_nibbles(const uint8_t* qs, int j) {
  const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * (j / 2)));
  return low_nibbles(j % 2 == 0 ? raw : _mm256_srli_epi16(raw, 4));
}

// Int16 element e of each 128-bit half, in every element: with `scales` holding a scale per
// element, sub-block e's scale register (vpshufb with bytes 2e, 2e + 1 repeated).
inline __m256i element_in_each_half(__m256i scales, int e) {
  return _mm256_shuffle_epi8(scales, _mm256_set1_epi16(static_cast<int16_t>(0x0100 * (2 * e + 1) + 2 * e)));
}

// One row's super-block, read once and used by every token of the tile:
//   scales: int16 scale of sub-block j at element j of each half (q4_k / q5_k: the same eight
//     in both halves; q6_k: group 2j in the low half, 2j + 1 in the high);
//   offsets: int16 per 16-value group g (16 of them, in g order): q4_k / q5_k its min, q6_k
//     32 x its scale (the centre);
//   d, dmin: the floats.
struct RowBlock {
  __m256i scales, offsets;
  float d, dmin;
};

// q4_k / q5_k: the same eight scales in both halves, the mins once per 16-value group.
template <class Block>
inline RowBlock affine_row(const Block* b) {
    const __m128i bytes = affine_scale_bytes(b->scales);
    return {_mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(bytes)),
            _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(bytes, bytes)), _cvtsh_ss(b->d), _cvtsh_ss(b->dmin)};
}

struct Q4K {
  using Block = quant::BlockQ4_K;
  static constexpr bool kSubtractsOffsets = true;  // weight = d sc q - dmin m
  static RowBlock row(const Block* b) { return affine_row(b); }
  static __m256i codes(const Block* b, int j) { return affine_nibbles(b->qs, j); }
};

// The fifth bit of sub-block j's value l is bit j of qh[l]: a 16-bit shift right by j puts it at
// bit 0 of its own byte (j <= 7), a shift left by 4 at bit 4.
struct Q5K {
  using Block = quant::BlockQ5_K;
  static constexpr bool kSubtractsOffsets = true;
  static RowBlock row(const Block* b) { return affine_row(b); }
  static __m256i codes(const Block* b, int j) {
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b->qh));
    const __m256i bit = _mm256_slli_epi16(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(j)), 4);
    return _mm256_or_si256(affine_nibbles(b->qs, j), _mm256_and_si256(bit, _mm256_set1_epi8(16)));
  }
};

// q6_k: sixteen 16-value groups with an int8 scale each, codes 0..63 for q - 32. Sub-block j =
// half h = j / 4, quarter s = j % 4 (values 128 h + 32 s ..): low nibbles of ql[64 h + 32 (s % 2)
// ..] (shifted down for s >= 2), high two bits at bits 2s of qh[32 h ..].
struct Q6K {
  using Block = quant::BlockQ6_K;
  static constexpr bool kSubtractsOffsets = false;  // the centre is folded into the integers
  static RowBlock row(const Block* b) {
    const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b->scales));
    const __m128i even_odd = _mm_shuffle_epi8(sc, _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15));
    return {_mm256_cvtepi8_epi16(even_odd), _mm256_slli_epi16(_mm256_cvtepi8_epi16(sc), 5),
            _cvtsh_ss(b->d), 0.0f};
  }
  static __m256i codes(const Block* b, int j) {
    const int h = j / 4, s = j % 4;
    const __m256i ql = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b->ql + 64 * h + 32 * (s % 2)));
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b->qh + 32 * h));
    const __m256i low = low_nibbles(s >= 2 ? _mm256_srli_epi16(ql, 4) : ql);
    const __m256i high = _mm256_slli_epi16(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * s)), 4);
    return _mm256_or_si256(low, _mm256_and_si256(high, _mm256_set1_epi8(0x30)));
  }
};

// Sixteen 16-value group scales (int8, in group order) as RowBlock::scales wants them: groups
// 2j in the low half, 2j + 1 in the high half, as int16.
inline __m256i group_scales(__m128i sc) {
  return _mm256_cvtepi8_epi16(
      _mm_shuffle_epi8(sc, _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15)));
}

// Bits shift .. shift + 1 of 32 packed 2-bit codes (the mask drops what a 16-bit shift brings
// in from the neighbouring byte).
inline __m256i two_bits(const uint8_t* p, int shift) {
  const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return _mm256_and_si256(_mm256_srl_epi16(raw, _mm_cvtsi32_si128(shift)), _mm256_set1_epi8(3));
}

// q2_k: 2-bit codes, a 4-bit scale (low nibble) and a 4-bit min (high nibble) per group of 16.
// Sub-block j: bits 2 (j % 4) of qs[32 (j / 4) ..].
struct Q2K {
  using Block = quant::BlockQ2_K;
  static constexpr bool kSubtractsOffsets = true;
  static RowBlock row(const Block* b) {
    const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b->scales));
    const __m128i low = _mm_set1_epi8(0x0f);
    return {group_scales(_mm_and_si128(sc, low)),
            _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sc, 4), low)), _cvtsh_ss(b->d),
            _cvtsh_ss(b->dmin)};
  }
  static __m256i codes(const Block* b, int j) { return two_bits(b->qs + 32 * (j / 4), 2 * (j % 4)); }
};

// q3_k: q2_k's low two bits plus a third from hmask (bit j of hmask[l] for sub-block j); the
// code (0..7) stands for code - 4, a centre folded into the integers as q6_k's. Scales: sixteen
// 6-bit values stored plus 32 (quant::unpack_scales_q3_k): low four bits from the nibbles of
// p0..p7 (groups 0-7 low, 8-15 high), high two from bits 2i of p8..p11 (group 4i + b in byte b).
struct Q3K {
  using Block = quant::BlockQ3_K;
  static constexpr bool kSubtractsOffsets = false;
  static RowBlock row(const Block* b) {
    const __m128i p = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b->scales));
    const __m128i low = _mm_set1_epi8(0x0f);
    const __m128i nibbles = _mm_unpacklo_epi64(_mm_and_si128(p, low), _mm_and_si128(_mm_srli_epi16(p, 4), low));
    int32_t top;
    std::memcpy(&top, b->scales + 8, 4);
    const __m128i high = _mm_and_si128(_mm_srlv_epi32(_mm_set1_epi32(top), _mm_setr_epi32(0, 2, 4, 6)),
                                       _mm_set1_epi8(3));
    const __m128i sc = _mm_sub_epi8(_mm_or_si128(nibbles, _mm_slli_epi16(high, 4)), _mm_set1_epi8(32));
    return {group_scales(sc), _mm256_slli_epi16(_mm256_cvtepi8_epi16(sc), 2), _cvtsh_ss(b->d), 0.0f};
  }
  static __m256i codes(const Block* b, int j) {
    const __m256i hmask = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b->hmask));
    const __m256i bit = _mm256_slli_epi16(_mm256_srl_epi16(hmask, _mm_cvtsi32_si128(j)), 2);
    return _mm256_or_si256(two_bits(b->qs + 32 * (j / 4), 2 * (j % 4)), _mm256_and_si256(bit, _mm256_set1_epi8(4)));
  }
};

// Rows this far ahead are prefetched while one is read: a K-quant row of a 0.5B model is only
// 0.5-2 KB, so a distance inside the row would stay within what the loop already waits for,
// and this host's hardware prefetcher alone left decode at half the memory bandwidth.
constexpr int kPrefetchRows = 4;
// (And kFarPrefetchBytes ahead into L2, gemm.h.)

// R rows x C tokens.
template <class Codec, int R, int C>
inline void k_tile(const uint8_t* w, size_t wrb, const uint8_t* x, size_t xrb, int64_t nsb,
                   float* y, int64_t ys) {
  using Block = typename Codec::Block;
  __m256 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  for (int64_t sb = 0; sb < nsb; ++sb) {
    const Block* blk[R];
    RowBlock row[R];
    for (int r = 0; r < R; ++r) {
      blk[r] = reinterpret_cast<const Block*>(w + r * wrb) + sb;
      for (int line = 0; line < static_cast<int>(sizeof(Block)); line += 64) {
        _mm_prefetch(reinterpret_cast<const char*>(blk[r]) + kPrefetchRows * wrb + line, _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(blk[r]) + kFarPrefetchBytes + line, _MM_HINT_T1);
      }
      row[r] = Codec::row(blk[r]);
    }
    const ActBlock256* a[C];
    for (int c = 0; c < C; ++c) a[c] = reinterpret_cast<const ActBlock256*>(x + c * xrb) + sb;
    __m256i sum[R][C];
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < C; ++c) sum[r][c] = _mm256_setzero_si256();
    for (int j = 0; j < 8; ++j) {
      __m256i xv[C];
      for (int c = 0; c < C; ++c) xv[c] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[c]->q + 32 * j));
      for (int r = 0; r < R; ++r) {
        const __m256i codes = Codec::codes(blk[r], j);
        const __m256i scale = element_in_each_half(row[r].scales, j);
        for (int c = 0; c < C; ++c) {
          sum[r][c] = _mm256_add_epi32(sum[r][c], _mm256_madd_epi16(_mm256_maddubs_epi16(codes, xv[c]), scale));
        }
      }
    }
    for (int c = 0; c < C; ++c) {
      const __m256i sums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[c]->sums));
      for (int r = 0; r < R; ++r) {
        const __m256i offsets = _mm256_madd_epi16(row[r].offsets, sums);
        if constexpr (Codec::kSubtractsOffsets) {
          acc[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum[r][c]), _mm256_set1_ps(row[r].d * a[c]->d), acc[r][c]);
          acc[r][c] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(offsets), _mm256_set1_ps(row[r].dmin * a[c]->d), acc[r][c]);
        } else {
          const __m256i centred = _mm256_sub_epi32(sum[r][c], offsets);
          acc[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(centred), _mm256_set1_ps(row[r].d * a[c]->d), acc[r][c]);
        }
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) y[c * ys + r] = hsum256(acc[r][c]);
}

#include "backend/cpu/gemm_drive.inc"

AFM_TILE_ADAPTER(Q2KTile, k_tile, 1, 4, Q2K,)
AFM_TILE_ADAPTER(Q3KTile, k_tile, 1, 4, Q3K,)
AFM_TILE_ADAPTER(Q4KTile, k_tile, 1, 4, Q4K,)
AFM_TILE_ADAPTER(Q5KTile, k_tile, 1, 4, Q5K,)
AFM_TILE_ADAPTER(Q6KTile, k_tile, 1, 4, Q6K,)
#undef AFM_TILE_ADAPTER

template <template <int, int> class Tile>
void gemm_super_blocks(const void* w, size_t wrb, int64_t nr, const void* x, size_t xrb,
                       int64_t nt, int64_t k, float* y, int64_t ys) {
  drive<Tile>(w, wrb, nr, x, xrb, nt, k / 256, y, ys);
}

}  // namespace

const GgmlBlockKernels* avx2_ggml_block_kernels_impl() {
  const GgmlBlockKernels& s = scalar_ggml_super_block_kernels();
  static const GgmlBlockKernels kernels{s.q4_1, s.q5_0, s.q5_1,
                                        gemm_super_blocks<Q2KTile>, gemm_super_blocks<Q3KTile>,
                                        gemm_super_blocks<Q4KTile>, gemm_super_blocks<Q5KTile>,
                                        gemm_super_blocks<Q6KTile>, true};
  return &kernels;
}

}  // namespace afm::cpu
#else
namespace afm::cpu {
const GgmlBlockKernels* avx2_ggml_block_kernels_impl() { return nullptr; }
}  // namespace afm::cpu
#endif
