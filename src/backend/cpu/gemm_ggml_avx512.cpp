// AVX-512 VNNI kernels for the K-quant types people download most (q4_k, q5_k in the _K_M
// mixes, q6_k for their output heads and attn_v / ffn_down): the scalar set
// (gemm_ggml_scalar.cpp) is their reference and serves the other read-only types.
//
// A super-block of 256 weights meets eight 32-value activation blocks; it is walked in four
// chunks of 64 values, two activation blocks per 512-bit register as in the q4_0 kernel:
// int32 lanes 0-7 sum activation block 2c, lanes 8-15 block 2c + 1 (each lane four products).
// Weights are unsigned codes (vpdpbusd takes unsigned x signed bytes):
//   q4_k / q5_k: q in 0..15 / 0..31, weight = A_j q - B_j per 32-value sub-block j; the B part
//     is d_a * sum(a) * B_j per activation block, added once per super-block in lanes 0-7;
//   q6_k: q in 0..63 stands for q - 32: the sum starts from -32 * sum(a) per lane (one vpdpbusd
//     per token and chunk, shared by the tile's rows); A per group of 16 values (four lanes).
// Each lane's float scale is A of its group times d_a of its block.
#include "backend/cpu/gemm.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "quant/k_quants.h"

namespace afm::cpu {
namespace {

constexpr int kPrefetchBytes = 2048;

inline __m512i load_act_pair(const ActBlock* a) {
  return _mm512_inserti64x4(
      _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[0].q))),
      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[1].q)), 1);
}

inline __m512 pair_scale(float lo, float hi) {
  return _mm512_insertf32x8(_mm512_set1_ps(lo), _mm256_set1_ps(hi), 1);
}

// Per row and super-block: the lane scales of each chunk and the eight sub-block offsets.
struct RowScales {
  alignas(64) float lanes[4][16];
  alignas(64) float offsets[16];  // B_j in lanes 0-7 (q4_k, q5_k), zero otherwise
};

// Scales A_j of eight 32-value sub-blocks (lanes 0-7 of a) spread to chunk c's lanes.
inline void spread_eight(__m512 a, RowScales& s) {
  for (int c = 0; c < 4; ++c) {
    const __m512i idx = _mm512_add_epi32(_mm512_set1_epi32(2 * c),
                                         _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1));
    _mm512_store_ps(s.lanes[c], _mm512_permutexvar_ps(idx, a));
  }
}

template <class Block>
inline void affine_scales(const Block* b, RowScales& s) {
  uint8_t sc[8], m[8];
  quant::unpack_scales_6bit(b->scales, sc, m);
  const __m128i both = _mm_unpacklo_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sc)),
                                          _mm_loadl_epi64(reinterpret_cast<const __m128i*>(m)));
  const __m512 v = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(both));  // sc 0-7, m 8-15
  const __m512 d = _mm512_insertf32x8(_mm512_set1_ps(_cvtsh_ss(b->d)), _mm256_set1_ps(_cvtsh_ss(b->dmin)), 1);
  const __m512 scaled = _mm512_mul_ps(v, d);
  spread_eight(scaled, s);
  _mm512_store_ps(s.offsets, _mm512_maskz_permutexvar_ps(
                                 0x00ff, _mm512_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15, 0, 0, 0, 0, 0, 0, 0, 0), scaled));
}

// Chunk c's 64 nibbles: low nibbles of qs[32c ..] (sub-block 2c), then the high ones.
inline __m512i q4_k_nibbles(const uint8_t* qs, int c) {
  const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * c));
  const __m256i mask = _mm256_set1_epi8(0x0f);
  return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_and_si256(raw, mask)),
                            _mm256_and_si256(_mm256_srli_epi16(raw, 4), mask), 1);
}

struct Q4K {
  using Block = quant::BlockQ4_K;
  static constexpr bool kOffsets = true;
  static constexpr int kCenter = 0;
  static void scales(const Block* b, RowScales& s) { affine_scales(b, s); }
  static __m512i codes(const Block* b, int c) { return q4_k_nibbles(b->qs, c); }
};

struct Q5K {
  using Block = quant::BlockQ5_K;
  static constexpr bool kOffsets = true;
  static constexpr int kCenter = 0;
  static void scales(const Block* b, RowScales& s) { affine_scales(b, s); }
  static __m512i codes(const Block* b, int c) {
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b->qh));
    const __mmask64 high =
        static_cast<__mmask64>(_mm256_test_epi8_mask(qh, _mm256_set1_epi8(static_cast<char>(1 << (2 * c))))) |
        (static_cast<__mmask64>(_mm256_test_epi8_mask(qh, _mm256_set1_epi8(static_cast<char>(2 << (2 * c))))) << 32);
    const __m512i q = q4_k_nibbles(b->qs, c);
    return _mm512_or_si512(q, _mm512_maskz_mov_epi8(high, _mm512_set1_epi8(16)));
  }
};

struct Q6K {
  using Block = quant::BlockQ6_K;
  static constexpr bool kOffsets = false;
  static constexpr int kCenter = 32;
  static void scales(const Block* b, RowScales& s) {
    const __m512 a = _mm512_mul_ps(
        _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b->scales)))),
        _mm512_set1_ps(_cvtsh_ss(b->d)));
    for (int c = 0; c < 4; ++c) {
      const __m512i idx = _mm512_add_epi32(_mm512_set1_epi32(4 * c),
                                           _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3));
      _mm512_store_ps(s.lanes[c], _mm512_permutexvar_ps(idx, a));
    }
  }
  // Chunk c = values 64 c ..: half h = c / 2, low or high nibbles of ql[64 h ..], and bits
  // 4 (c % 2) .. +3 of qh[32 h ..] (two bits for the first 32 values, two for the next).
  static __m512i codes(const Block* b, int c) {
    const int h = c / 2, shift = 4 * (c % 2);
    const __m512i ql = _mm512_loadu_si512(b->ql + 64 * h);
    const __m512i low = _mm512_and_si512(_mm512_srli_epi16(ql, shift), _mm512_set1_epi8(0x0f));
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b->qh + 32 * h));
    const __m512i hs = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_srli_epi16(qh, shift)),
                                          _mm256_srli_epi16(qh, shift + 2), 1);
    const __m512i high = _mm512_slli_epi16(_mm512_and_si512(hs, _mm512_set1_epi8(3)), 4);
    return _mm512_or_si512(low, high);
  }
};

template <class Codec, int R, int C>
inline void ggml_tile(const uint8_t* w, size_t wrb, const uint8_t* x, size_t xrb, int64_t nsb,
                      float* y, int64_t ys) {
  using Block = typename Codec::Block;
  __m512 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
  RowScales scales[R];
  for (int64_t sb = 0; sb < nsb; ++sb) {
    const Block* blk[R];
    for (int r = 0; r < R; ++r) {
      blk[r] = reinterpret_cast<const Block*>(w + r * wrb) + sb;
      _mm_prefetch(reinterpret_cast<const char*>(blk[r]) + kPrefetchBytes, _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(blk[r]) + kPrefetchBytes + 64, _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(blk[r]) + kPrefetchBytes + 128, _MM_HINT_T0);
      Codec::scales(blk[r], scales[r]);
    }
    if constexpr (Codec::kOffsets) {
      for (int c = 0; c < C; ++c) {
        const auto* a = reinterpret_cast<const ActBlock*>(x + c * xrb) + 8 * sb;
        alignas(32) float mass[8];
        for (int j = 0; j < 8; ++j) mass[j] = a[j].d * static_cast<float>(a[j].sum);
        const __m512 m = _mm512_zextps256_ps512(_mm256_load_ps(mass));
        for (int r = 0; r < R; ++r) acc[r][c] = _mm512_fnmadd_ps(_mm512_load_ps(scales[r].offsets), m, acc[r][c]);
      }
    }
    for (int ch = 0; ch < 4; ++ch) {
      __m512i wq[R];
      for (int r = 0; r < R; ++r) wq[r] = Codec::codes(blk[r], ch);
      for (int c = 0; c < C; ++c) {
        const auto* a = reinterpret_cast<const ActBlock*>(x + c * xrb) + 8 * sb + 2 * ch;
        const __m512i xv = load_act_pair(a);
        const __m512 dx = pair_scale(a[0].d, a[1].d);
        __m512i start = _mm512_setzero_si512();
        if constexpr (Codec::kCenter != 0) {
          start = _mm512_sub_epi32(start, _mm512_dpbusd_epi32(_mm512_setzero_si512(),
                                                              _mm512_set1_epi8(Codec::kCenter), xv));
        }
        for (int r = 0; r < R; ++r) {
          const __m512i s = _mm512_dpbusd_epi32(start, wq[r], xv);
          acc[r][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s),
                                      _mm512_mul_ps(_mm512_load_ps(scales[r].lanes[ch]), dx), acc[r][c]);
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

template <template <int, int> class Tile>
void gemm_super_blocks(const void* w, size_t wrb, int64_t nr, const void* x, size_t xrb,
                       int64_t nt, int64_t k, float* y, int64_t ys) {
  drive<Tile>(w, wrb, nr, x, xrb, nt, k / 256, y, ys);
}

}  // namespace

const GgmlBlockKernels* avx512_ggml_block_kernels_impl() {
  const GgmlBlockKernels& s = scalar_ggml_block_kernels();
  static const GgmlBlockKernels kernels{s.q4_1, s.q5_0, s.q5_1, s.q2_k, s.q3_k,
                                        gemm_super_blocks<Q4KTile>, gemm_super_blocks<Q5KTile>,
                                        gemm_super_blocks<Q6KTile>};
  return &kernels;
}

}  // namespace afm::cpu
#else
namespace afm::cpu {
const GgmlBlockKernels* avx512_ggml_block_kernels_impl() { return nullptr; }
}  // namespace afm::cpu
#endif
