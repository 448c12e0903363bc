// AVX-512 set of the vector primitives: the AVX2 set (vec_avx2.cpp) with grouped-query
// attention pairs that convert each f16 cache row once for two query heads and keep the mixed
// outputs in registers. Every result is bit-identical to the AVX2 single-head functions:
//   scores: a 16-lane accumulator over 16-value chunks holds the AVX2 kernel's two 8-lane
//     accumulators (lanes 0-7 = s0, 8-15 = s1) with the same fused multiply-adds in the same
//     order; the two halves are added and reduced with the same tree (hsum below);
//   mix: out[i] = fma(p_j, v_j[i], out[i]) for j in order, lane by lane, as axpy_f16.
// Compiled with AVX-512 flags for this file only; helpers are file-local.
#include "backend/cpu/vec.h"

#if defined(__x86_64__)
#include <immintrin.h>

namespace afm::cpu {

const VecKernels* avx2_vec_kernels_impl();

namespace {

// The AVX2 set's horizontal sum (vec_avx2.cpp), operation for operation.
inline float hsum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 s2 = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s2, _mm_movehdup_ps(s2)));
}

inline float reduce(__m512 acc) {
  return hsum(_mm256_add_ps(_mm512_castps512_ps256(acc), _mm512_extractf32x8_ps(acc, 1)));
}

inline __m512 load_f16(const uint16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// Rows whose length the pair kernels take (the AVX2 kernels' main loop only, no tails); other
// lengths go to the AVX2 single-head kernels, one head after the other.
bool pair_fits(int64_t d) { return d % 16 == 0; }

// Scores of NQ query rows against the same n rows: one conversion of each row for all of them.
template <int NQ>
void scores_rows(const float* const q[NQ], const uint16_t* k, int64_t n, int64_t d, float scale,
                 float* const s[NQ]) {
  for (int64_t j = 0; j < n; ++j) {
    const uint16_t* row = k + j * d;
    __m512 a[NQ];
    for (int i = 0; i < NQ; ++i) a[i] = _mm512_setzero_ps();
    for (int64_t c = 0; c < d; c += 16) {
      const __m512 kv = load_f16(row + c);
      for (int i = 0; i < NQ; ++i) a[i] = _mm512_fmadd_ps(_mm512_loadu_ps(q[i] + c), kv, a[i]);
    }
    for (int i = 0; i < NQ; ++i) s[i][j] = reduce(a[i]) * scale;
  }
}

// out[i] columns [0, 16 V) of a pass over all n rows, in registers (NQ x V accumulators).
template <int NQ, int V>
void mix_columns(const float* const p[NQ], const uint16_t* v, int64_t n, int64_t d,
                 float* const out[NQ], int64_t c0) {
  __m512 o[NQ][V];
  for (int i = 0; i < NQ; ++i)
    for (int c = 0; c < V; ++c) o[i][c] = _mm512_loadu_ps(out[i] + c0 + 16 * c);
  for (int64_t j = 0; j < n; ++j) {
    __m512 w[NQ];
    for (int i = 0; i < NQ; ++i) w[i] = _mm512_set1_ps(p[i][j]);
    for (int c = 0; c < V; ++c) {
      const __m512 x = load_f16(v + j * d + c0 + 16 * c);
      for (int i = 0; i < NQ; ++i) o[i][c] = _mm512_fmadd_ps(w[i], x, o[i][c]);
    }
  }
  for (int i = 0; i < NQ; ++i)
    for (int c = 0; c < V; ++c) _mm512_storeu_ps(out[i] + c0 + 16 * c, o[i][c]);
}

// Column passes of at most 16 x kWidth values: 2 x 8 or 4 x 4 accumulators plus the row.
template <int NQ>
void mix_rows(const float* const p[NQ], const uint16_t* v, int64_t n, int64_t d, float* const out[NQ]) {
  constexpr int kWidth = NQ <= 2 ? 8 : 4;
  for (int64_t c0 = 0; c0 < d; c0 += 16 * kWidth) {
    switch ((d - c0 < 16 * kWidth ? d - c0 : 16 * kWidth) / 16) {
      case 1: mix_columns<NQ, 1>(p, v, n, d, out, c0); break;
      case 2: mix_columns<NQ, 2>(p, v, n, d, out, c0); break;
      case 3: mix_columns<NQ, 3>(p, v, n, d, out, c0); break;
      case 4: mix_columns<NQ, 4>(p, v, n, d, out, c0); break;
      case 5: if constexpr (kWidth >= 5) mix_columns<NQ, 5>(p, v, n, d, out, c0); break;
      case 6: if constexpr (kWidth >= 6) mix_columns<NQ, 6>(p, v, n, d, out, c0); break;
      case 7: if constexpr (kWidth >= 7) mix_columns<NQ, 7>(p, v, n, d, out, c0); break;
      default: if constexpr (kWidth >= 8) mix_columns<NQ, 8>(p, v, n, d, out, c0); break;
    }
  }
}

void scores_f16_pair(const float* q0, const float* q1, const uint16_t* k, int64_t n, int64_t d,
                     float scale, float* s0, float* s1) {
  if (!pair_fits(d)) {
    const VecKernels& single = *avx2_vec_kernels_impl();
    single.scores_f16(q0, k, n, d, scale, s0);
    return single.scores_f16(q1, k, n, d, scale, s1);
  }
  const float* q[2] = {q0, q1};
  float* const s[2] = {s0, s1};
  scores_rows<2>(q, k, n, d, scale, s);
}

void mix_f16_pair(const float* p0, const float* p1, const uint16_t* v, int64_t n, int64_t d,
                  float* out0, float* out1) {
  if (!pair_fits(d)) {
    const VecKernels& single = *avx2_vec_kernels_impl();
    single.mix_f16(p0, v, n, d, out0);
    return single.mix_f16(p1, v, n, d, out1);
  }
  const float* p[2] = {p0, p1};
  float* const out[2] = {out0, out1};
  mix_rows<2>(p, v, n, d, out);
}

void scores_f16_quad(const float* const q[4], const uint16_t* k, int64_t n, int64_t d, float scale,
                     float* const s[4]) {
  if (!pair_fits(d)) {
    for (int i = 0; i < 4; ++i) avx2_vec_kernels_impl()->scores_f16(q[i], k, n, d, scale, s[i]);
    return;
  }
  scores_rows<4>(q, k, n, d, scale, s);
}

void mix_f16_quad(const float* const p[4], const uint16_t* v, int64_t n, int64_t d, float* const out[4]) {
  if (!pair_fits(d)) {
    for (int i = 0; i < 4; ++i) avx2_vec_kernels_impl()->mix_f16(p[i], v, n, d, out[i]);
    return;
  }
  mix_rows<4>(p, v, n, d, out);
}

}  // namespace

const VecKernels* avx512_vec_kernels_impl() {
  static const VecKernels k = [] {
    VecKernels set = *avx2_vec_kernels_impl();
    set.isa = "avx512";
    set.scores_f16_pair = scores_f16_pair;
    set.mix_f16_pair = mix_f16_pair;
    set.scores_f16_quad = scores_f16_quad;
    set.mix_f16_quad = mix_f16_quad;
    return set;
  }();
  return &k;
}

}  // namespace afm::cpu
#else
namespace afm::cpu {
const VecKernels* avx512_vec_kernels_impl() { return nullptr; }
}  // namespace afm::cpu
#endif
