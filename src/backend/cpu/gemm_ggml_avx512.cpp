// AVX-512 VNNI kernels for the K-quant types people download most (q4_k, q5_k in the _K_M
// mixes, q6_k for their output heads and attn_v / ffn_down, q3_k and q2_k of the small-device
// mixes): the scalar set (gemm_ggml_scalar.cpp) is their reference and serves the other
// read-only types.
//
// A super-block of 256 weights meets eight 32-value activation blocks; it is walked in four
// chunks of 64 values, two activation blocks per 512-bit register as in the q4_0 kernel:
// int32 lanes 0-7 sum one block, lanes 8-15 the other (each lane four products); the blocks are
// 2c and 2c + 1 for q6_k / q3_k / q2_k, j and j + 2 for q4_k / q5_k (as their nibbles pack).
// Weights are unsigned codes (vpdpbusd takes unsigned x signed bytes):
//   q4_k / q5_k: q in 0..15 / 0..31, weight = A_j q - B_j per 32-value sub-block j; the B part
//     is d_a * sum(a) * B_j per activation block, subtracted once per super-block in lanes 8-15;
//   q6_k: q in 0..63 stands for q - 32: the sum starts from -32 * sum(a) per lane (one vpdpbusd
//     per token and chunk, shared by the tile's rows); A per group of 16 values (four lanes);
//   q3_k: likewise with q in 0..7 standing for q - 4;
//   q2_k: q in 0..3 with an offset per 16-value group, from each group's activation sum.
// Each lane's float scale is A of its group times d_a of its block. Batches of 4 tokens or more
// go through the packed 16-row path (gemm_ggml_avx512_packed.inc) where 16 rows allow it.
#include "backend/cpu/gemm.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstddef>

#include "quant/k_quants.h"

namespace afm::cpu {
namespace {

constexpr int kPrefetchBytes = 2048;
// (And kFarPrefetchBytes ahead into L2, gemm.h.)

// Sixteen floats per row and super-block, kept in a register: A_j (lanes 0-7) and B_j (lanes
// 8-15) for q4_k / q5_k; A_g of the sixteen 16-value groups for q6_k. chunk_scales spreads the
// ones a chunk needs over its lanes with one permute.
//
// q4_k / q5_k chunks go in the order the packed nibbles give them: a 64-byte load of qs[64 p ..]
// holds sub-blocks 4p and 4p + 2 in its low nibbles and 4p + 1, 4p + 3 in its high ones, so
// "chunk" (p, half) pairs activation blocks j and j + 2 with j = 4p + half.

// The twelve packed 6-bit scale / min bytes p0..p11 -> [scale 0-7, min 0-7] as floats times
// [d, dmin], in vector registers only (the 16-byte load reads 4 bytes of qs past the scales):
//   scale 0-3 = p0-3 & 63                min 0-3 = p4-7 & 63
//   scale 4-7 = (p8-11 & 15) | (p0-3 >> 6) << 4
//   min 4-7   = (p8-11 >> 4) | (p4-7 >> 6) << 4
inline __m512 affine_scales(const uint8_t* p, const uint16_t* d_dmin) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i a = _mm_shuffle_epi8(v, _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11));
  const __m128i b = _mm_shuffle_epi8(v, _mm_setr_epi8(-1, -1, -1, -1, 0, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, 7));
  const __m128i low = _mm_or_si128(
      _mm_and_si128(a, _mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0)),
      _mm_and_si128(_mm_srli_epi16(a, 4), _mm_setr_epi32(0, 0, 0, 0x0f0f0f0f)));
  const __m128i high = _mm_and_si128(_mm_srli_epi16(b, 2), _mm_setr_epi32(0, 0x30303030, 0, 0x30303030));
  const __m512 v16 = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_or_si128(low, high)));
  int32_t both;
  __builtin_memcpy(&both, d_dmin, 4);
  const __m512 d = _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1),
                                         _mm512_castps128_ps512(_mm_cvtph_ps(_mm_cvtsi32_si128(both))));
  return _mm512_mul_ps(v16, d);
}

// The scales d_a (lanes 0-7) and masses d_a * sum(a) (lanes 8-15) of eight consecutive
// activation blocks (40 bytes each, so their (d, sum) pairs are qwords 0, 5, 10, ... 35 of the
// 320 bytes): five loads and two permutes.
inline __m512 block_scales_and_masses(const ActBlock* a) {
  static_assert(sizeof(ActBlock) == 40 && offsetof(ActBlock, sum) == 4);
  const auto* q = reinterpret_cast<const long long*>(a);
  const __m512i v0 = _mm512_loadu_si512(q), v1 = _mm512_loadu_si512(q + 8);
  const __m512i v2 = _mm512_loadu_si512(q + 16), v3 = _mm512_loadu_si512(q + 24);
  const __m512i v4 = _mm512_maskz_loadu_epi64(0x0f, q + 32);
  // pairs 0-3 from v0 | v1 (qwords 0, 5, 10, 15), pairs 4-7 from v2 | v3 | v4 (20, 25, 30, 35)
  const __m512i lo = _mm512_permutex2var_epi64(v0, _mm512_setr_epi64(0, 5, 10, 15, 0, 0, 0, 0), v1);
  const __m512i hi23 = _mm512_permutex2var_epi64(v2, _mm512_setr_epi64(0, 0, 0, 0, 4, 9, 14, 0), v3);
  const __m512i hi = _mm512_mask_permutexvar_epi64(hi23, 0x80, _mm512_set1_epi64(3), v4);
  const __m512i pairs = _mm512_mask_blend_epi64(0xf0, lo, hi);
  const __m256 d = _mm256_castsi256_ps(_mm512_cvtepi64_epi32(pairs));
  const __m256 sum = _mm256_cvtepi32_ps(_mm512_cvtepi64_epi32(_mm512_srli_epi64(pairs, 32)));
  return _mm512_insertf32x8(_mm512_castps256_ps512(d), _mm256_mul_ps(d, sum), 1);
}

template <class Block>
struct AffineK {
  static constexpr bool kOffsets = true;
  static constexpr bool kGroupOffsets = false;
  static constexpr int kCenter = 0;
  static __m512 scales(const Block* b) { return affine_scales(b->scales, &b->d); }
  // [A_j d_aj (lanes 0-7), B_j (lanes 8-15)] from the row's scales and the token's
  // block_scales_and_masses: one multiply per row, token and super-block.
  static __m512 times_token(__m512 s, __m512 token) {
    return _mm512_mask_mul_ps(s, 0x00ff, s, token);
  }
  // Activation blocks of chunk ch (0-3): j and j + 2 with j = 4 (ch / 2) + ch % 2.
  static int first_block(int ch) { return 4 * (ch / 2) + ch % 2; }
  static constexpr int kBlockStep = 2;
  static __m512 chunk_scales(__m512 s, int ch) {
    const int j = first_block(ch);
    return _mm512_permutexvar_ps(_mm512_add_epi32(_mm512_set1_epi32(j),
                                                  _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2)), s);
  }
  // acc - B_j d_aj sum_j in lanes 8-15 (reduced with the rest at the end).
  static __m512 minus_offsets(__m512 acc, __m512 s, __m512 token) {
    return _mm512_mask3_fnmadd_ps(s, token, acc, 0xff00);
  }
  // For the packed path: which of scales()' 16 lanes holds activation block j's scale for a
  // half (A_j for both) and its offset (B_j).
  static int scale_lane(int j, int /*half*/) { return j; }
  static int offset_lane(int j, int /*half*/) { return 8 + j; }
  // Nibbles of both halves of qs[64 p ..]: chunk 2p (low) and 2p + 1 (high).
  static void nibbles(const Block* b, int p, __m512i& low, __m512i& high) {
    const __m512i raw = _mm512_loadu_si512(b->qs + 64 * p);
    const __m512i mask = _mm512_set1_epi8(0x0f);
    low = _mm512_and_si512(raw, mask);
    high = _mm512_and_si512(_mm512_srli_epi16(raw, 4), mask);
  }
};

struct Q4K : AffineK<quant::BlockQ4_K> {
  using Block = quant::BlockQ4_K;
  static void codes(const Block* b, int p, __m512i& c0, __m512i& c1) { nibbles(b, p, c0, c1); }
};

// The fifth bit of sub-block j's values is bit j of qh[0 .. 31]. With hq = [qh | qh >> 2],
// chunk (p, half)'s sub-blocks j = 4p + half and j + 2 both read bit 4p + half of hq, which a
// shift by 4 - (4p + half) moves to bit 4 (16-bit shifts: bit 4 of each byte comes from its
// own byte for these distances).
struct Q5K : AffineK<quant::BlockQ5_K> {
  using Block = quant::BlockQ5_K;
  static void codes(const Block* b, int p, __m512i& c0, __m512i& c1) {
    nibbles(b, p, c0, c1);
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b->qh));
    const __m512i hq = _mm512_inserti64x4(_mm512_castsi256_si512(qh), _mm256_srli_epi16(qh, 2), 1);
    const __m512i sixteen = _mm512_set1_epi8(16);
    const __m512i h0 = p == 0 ? _mm512_slli_epi16(hq, 4) : hq;
    const __m512i h1 = p == 0 ? _mm512_slli_epi16(hq, 3) : _mm512_srli_epi16(hq, 1);
    c0 = _mm512_or_si512(c0, _mm512_and_si512(h0, sixteen));
    c1 = _mm512_or_si512(c1, _mm512_and_si512(h1, sixteen));
  }
};

// q6_k and q3_k: sixteen 16-value groups with a scale each and no offsets; chunk ch = values
// 64 ch ..: activation blocks 2 ch and 2 ch + 1, four groups.
struct Groups16 {
  static constexpr bool kOffsets = false;
  static constexpr bool kGroupOffsets = false;
  static constexpr int kBlockStep = 1;
  static int first_block(int ch) { return 2 * ch; }
  // For the packed path: the lane of scales() (and of group_offsets()) for block j's half.
  static int scale_lane(int j, int half) { return 2 * j + half; }
  static int offset_lane(int j, int half) { return 2 * j + half; }
  static __m512 chunk_scales(__m512 s, int ch) {
    return _mm512_permutexvar_ps(_mm512_add_epi32(_mm512_set1_epi32(4 * ch),
                                                  _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3)), s);
  }
  // [A_g d_a(g / 2)]: each activation block's scale serves two 16-value groups.
  static __m512 times_token(__m512 s, __m512 token) {
    return _mm512_mul_ps(s, _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7), token));
  }
};

struct Q6K : Groups16 {
  using Block = quant::BlockQ6_K;
  static constexpr int kCenter = 32;
  static __m512 scales(const Block* b) {
    return _mm512_mul_ps(
        _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b->scales)))),
        _mm512_set1_ps(_cvtsh_ss(b->d)));
  }
  // Chunks 2p and 2p + 1 = half p: low and high nibbles of ql[64 p ..], with bits 0-3 and 4-7
  // of qh[32 p ..] (two bits for each chunk's first 32 values, two for its next 32).
  static void codes(const Block* b, int p, __m512i& c0, __m512i& c1) {
    const __m512i ql = _mm512_loadu_si512(b->ql + 64 * p);
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b->qh + 32 * p));
    const __m512i hs = _mm512_inserti64x4(_mm512_castsi256_si512(qh), _mm256_srli_epi16(qh, 2), 1);
    const __m512i nibble = _mm512_set1_epi8(0x0f), bits45 = _mm512_set1_epi8(0x30);
    // (low & 0x0f) | high, as one ternary-logic instruction (0xec: (A & C) | B)
    c0 = _mm512_ternarylogic_epi32(ql, _mm512_and_si512(_mm512_slli_epi16(hs, 4), bits45), nibble, 0xec);
    c1 = _mm512_ternarylogic_epi32(_mm512_srli_epi16(ql, 4), _mm512_and_si512(hs, bits45), nibble, 0xec);
  }
};

// q3_k: code = low two bits + 4 x the high bit, in 0..7, stands for q - 4 (centre 4).
struct Q3K : Groups16 {
  using Block = quant::BlockQ3_K;
  static constexpr int kCenter = 4;
  // The sixteen 6-bit scales (quant::unpack_scales_q3_k) minus 32, times d: group g's low four
  // bits are nibble g / 8 of byte g % 8, its high two bits are bits 2 (g / 4) of byte 8 + g % 4.
  static __m512 scales(const Block* b) {
    const __m128i v = _mm_maskz_loadu_epi8(0x0fff, b->scales);
    const __m128i lo8 = _mm_shuffle_epi8(v, _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7));
    const __m128i low = _mm_and_si128(_mm_mask_blend_epi8(0xff00, lo8, _mm_srli_epi16(lo8, 4)), _mm_set1_epi8(15));
    const __m128i hb = _mm_shuffle_epi8(v, _mm_setr_epi8(8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11));
    __m128i high = _mm_mask_blend_epi8(0x00f0, hb, _mm_srli_epi16(hb, 2));
    high = _mm_mask_blend_epi8(0x0f00, high, _mm_srli_epi16(hb, 4));
    high = _mm_mask_blend_epi8(0xf000, high, _mm_srli_epi16(hb, 6));
    high = _mm_slli_epi16(_mm_and_si128(high, _mm_set1_epi8(3)), 4);
    const __m128i sc = _mm_sub_epi8(_mm_or_si128(low, high), _mm_set1_epi8(32));
    return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(sc)), _mm512_set1_ps(_cvtsh_ss(b->d)));
  }
  // Half p (values 128 p ..): bits 2s..2s+1 of qs[32 p + l] are value 32 s + l's low bits; bit
  // 4p + s of hmask[l] its high bit. Chunk 2p takes s = 0, 1; chunk 2p + 1 takes s = 2, 3.
  static void codes(const Block* b, int p, __m512i& c0, __m512i& c1) {
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b->qs + 32 * p));
    const __m256i hm = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b->hmask));
    const __m512i qq = _mm512_inserti64x4(_mm512_castsi256_si512(q), _mm256_srli_epi16(q, 2), 1);
    const __m512i hh = _mm512_inserti64x4(_mm512_castsi256_si512(hm), _mm256_srli_epi16(hm, 1), 1);
    const __m512i three = _mm512_set1_epi8(3), one = _mm512_set1_epi8(1);
    const __m512i h0 = _mm512_and_si512(_mm512_srl_epi16(hh, _mm_cvtsi32_si128(4 * p)), one);
    const __m512i h1 = _mm512_and_si512(_mm512_srl_epi16(hh, _mm_cvtsi32_si128(4 * p + 2)), one);
    c0 = _mm512_or_si512(_mm512_and_si512(qq, three), _mm512_slli_epi16(h0, 2));
    c1 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(qq, 4), three), _mm512_slli_epi16(h1, 2));
  }
};

// q2_k: codes 0..3 as q3_k's low bits; per 16-value group a scale A_g = d (sc & 15) and an
// offset B_g = dmin (sc >> 4), so the offsets need each group's activation sum (group_masses).
struct Q2K : Groups16 {
  using Block = quant::BlockQ2_K;
  static constexpr int kCenter = 0;
  static constexpr bool kGroupOffsets = true;
  static __m512 scales(const Block* b) {
    const __m128i sc = _mm_and_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b->scales)), _mm_set1_epi8(15));
    return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(sc)), _mm512_set1_ps(_cvtsh_ss(b->d)));
  }
  static __m512 group_offsets(const Block* b) {
    const __m128i m = _mm_and_si128(_mm_srli_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b->scales)), 4),
                                    _mm_set1_epi8(15));
    return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(m)), _mm512_set1_ps(_cvtsh_ss(b->dmin)));
  }
  static void codes(const Block* b, int p, __m512i& c0, __m512i& c1) {
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b->qs + 32 * p));
    const __m512i qq = _mm512_inserti64x4(_mm512_castsi256_si512(q), _mm256_srli_epi16(q, 2), 1);
    const __m512i three = _mm512_set1_epi8(3);
    c0 = _mm512_and_si512(qq, three);
    c1 = _mm512_and_si512(_mm512_srli_epi16(qq, 4), three);
  }
};

// d_a * (sum of a) of each of a super-block's sixteen 16-value groups, from the token's eight
// activation blocks and block_scales_and_masses' d_a lanes. One vpdpbusd per 64 values gives
// four-value sums in int32 lanes, each 128-bit lane one group; unpacks and adds then leave
// lane 4L + i = group 4i + L, which one permute puts in order.
inline __m512 group_masses(const ActBlock* a, __m512 token) {
  __m512i v[4];
  for (int ch = 0; ch < 4; ++ch) {
    const __m512i xv = _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[2 * ch].q))),
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[2 * ch + 1].q)), 1);
    v[ch] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8(1), xv);
  }
  const __m512i ab = _mm512_add_epi32(_mm512_unpacklo_epi32(v[0], v[1]), _mm512_unpackhi_epi32(v[0], v[1]));
  const __m512i cd = _mm512_add_epi32(_mm512_unpacklo_epi32(v[2], v[3]), _mm512_unpackhi_epi32(v[2], v[3]));
  const __m512i sums = _mm512_add_epi32(_mm512_unpacklo_epi64(ab, cd), _mm512_unpackhi_epi64(ab, cd));
  const __m512i ordered = _mm512_permutexvar_epi32(
      _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), sums);
  const __m512 d = _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7), token);
  return _mm512_mul_ps(_mm512_cvtepi32_ps(ordered), d);
}

template <class Codec, int R, int C>
inline void ggml_tile(const uint8_t* w, size_t wrb, const uint8_t* x, size_t xrb, int64_t nsb,
                      float* y, int64_t ys) {
  using Block = typename Codec::Block;
  __m512 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
  for (int64_t sb = 0; sb < nsb; ++sb) {
    const Block* blk[R];
    __m512 scales[R], group_offsets[R];
    for (int r = 0; r < R; ++r) {
      blk[r] = reinterpret_cast<const Block*>(w + r * wrb) + sb;
      if constexpr (Codec::kGroupOffsets) group_offsets[r] = Codec::group_offsets(blk[r]);
      for (int line = 0; line < static_cast<int>(sizeof(Block)); line += 64) {
        _mm_prefetch(reinterpret_cast<const char*>(blk[r]) + kPrefetchBytes + line, _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(blk[r]) + kFarPrefetchBytes + line, _MM_HINT_T1);
      }
      scales[r] = Codec::scales(blk[r]);
    }
    // Per row and token: each sub-block's scale times the token's block scale, and the offsets.
    __m512 row_token[R][C];
    for (int c = 0; c < C; ++c) {
      const auto* a = reinterpret_cast<const ActBlock*>(x + c * xrb) + 8 * sb;
      const __m512 token = block_scales_and_masses(a);
      __m512 masses = _mm512_setzero_ps();
      if constexpr (Codec::kGroupOffsets) masses = group_masses(a, token);
      for (int r = 0; r < R; ++r) {
        row_token[r][c] = Codec::times_token(scales[r], token);
        if constexpr (Codec::kOffsets) acc[r][c] = Codec::minus_offsets(acc[r][c], scales[r], token);
        if constexpr (Codec::kGroupOffsets) acc[r][c] = _mm512_fnmadd_ps(group_offsets[r], masses, acc[r][c]);
      }
    }
    for (int p = 0; p < 2; ++p) {
      __m512i codes[2][R];
      for (int r = 0; r < R; ++r) Codec::codes(blk[r], p, codes[0][r], codes[1][r]);
      for (int half = 0; half < 2; ++half) {
        const int ch = 2 * p + half, j = Codec::first_block(ch);
        for (int c = 0; c < C; ++c) {
          const auto* a = reinterpret_cast<const ActBlock*>(x + c * xrb) + 8 * sb + j;
          const __m512i xv = _mm512_inserti64x4(
              _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[0].q))),
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[Codec::kBlockStep].q)), 1);
          __m512i start = _mm512_setzero_si512();
          if constexpr (Codec::kCenter != 0) {
            start = _mm512_sub_epi32(start, _mm512_dpbusd_epi32(_mm512_setzero_si512(),
                                                                _mm512_set1_epi8(Codec::kCenter), xv));
          }
          for (int r = 0; r < R; ++r) {
            const __m512i s = _mm512_dpbusd_epi32(start, codes[half][r], xv);
            acc[r][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), Codec::chunk_scales(row_token[r][c], ch), acc[r][c]);
          }
        }
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) y[c * ys + r] = _mm512_reduce_add_ps(acc[r][c]);
}

#include "backend/cpu/gemm_drive.inc"

AFM_TILE_ADAPTER(Q4KTile, ggml_tile, 4, 4, Q4K,)
AFM_TILE_ADAPTER(Q5KTile, ggml_tile, 4, 4, Q5K,)
AFM_TILE_ADAPTER(Q6KTile, ggml_tile, 4, 4, Q6K,)
AFM_TILE_ADAPTER(Q3KTile, ggml_tile, 4, 4, Q3K,)
AFM_TILE_ADAPTER(Q2KTile, ggml_tile, 4, 4, Q2K,)

#include "backend/cpu/gemm_ggml_avx512_packed.inc"

// 4 x 4 tiles for decode too: 8-row tiles for one token spill registers (measured 35% slower).
// Register tiles only: each token's outputs are those of a call with that token alone.
template <template <int, int> class Tile>
void gemm_super_blocks(const void* w, size_t wrb, int64_t nr, const void* x, size_t xrb,
                       int64_t nt, int64_t k, float* y, int64_t ys) {
  drive<Tile>(w, wrb, nr, x, xrb, nt, k / 256, y, ys);
}

// Batches of kPerTokenPathBelow tokens or more: 16-row groups take the packed path, the rest
// of the rows the register tiles. (For one token the packed path's decode into lanes costs far
// more than the tiles': Qwen3-0.6B Q4_K_M decode ran at 44 tokens/s against 78-89.)
template <class Codec, template <int, int> class Tile>
void gemm_super_blocks_batched(const void* w, size_t wrb, int64_t nr, const void* x, size_t xrb,
                               int64_t nt, int64_t k, float* y, int64_t ys) {
  const auto* wb = static_cast<const uint8_t*>(w);
  int64_t r = 0;
  if (nt >= kPerTokenPathBelow) {
    for (; r + kPackRows <= nr; r += kPackRows) {
      packed_k_group<Codec>(wb + r * wrb, wrb, static_cast<const uint8_t*>(x), xrb, nt, k / 256, y + r, ys);
    }
  }
  if (r < nr) drive<Tile>(wb + r * wrb, wrb, nr - r, x, xrb, nt, k / 256, y + r, ys);
}

}  // namespace

const GgmlBlockKernels* avx512_ggml_block_kernels_impl() {
  const GgmlBlockKernels& s = scalar_ggml_block_kernels();
  static const GgmlBlockKernels kernels{s.q4_1, s.q5_0, s.q5_1,
                                        gemm_super_blocks_batched<Q2K, Q2KTile>,
                                        gemm_super_blocks_batched<Q3K, Q3KTile>,
                                        gemm_super_blocks_batched<Q4K, Q4KTile>,
                                        gemm_super_blocks_batched<Q5K, Q5KTile>,
                                        gemm_super_blocks_batched<Q6K, Q6KTile>};
  return &kernels;
}

const GgmlBlockKernels* avx512_ggml_per_token_kernels_impl() {
  const GgmlBlockKernels& s = scalar_ggml_block_kernels();
  static const GgmlBlockKernels kernels{s.q4_1, s.q5_0, s.q5_1, gemm_super_blocks<Q2KTile>,
                                        gemm_super_blocks<Q3KTile>,
                                        gemm_super_blocks<Q4KTile>, gemm_super_blocks<Q5KTile>,
                                        gemm_super_blocks<Q6KTile>};
  return &kernels;
}

}  // namespace afm::cpu
#else
namespace afm::cpu {
const GgmlBlockKernels* avx512_ggml_block_kernels_impl() { return nullptr; }
const GgmlBlockKernels* avx512_ggml_per_token_kernels_impl() { return nullptr; }
}  // namespace afm::cpu
#endif
