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

void scores_f16_pair(const float* q0, const float* q1, const uint16_t* k, int64_t n, int64_t d,
                     float scale, float* s0, float* s1) {
  if (!pair_fits(d)) {
    const VecKernels& single = *avx2_vec_kernels_impl();
    single.scores_f16(q0, k, n, d, scale, s0);
    return single.scores_f16(q1, k, n, d, scale, s1);
  }
  for (int64_t j = 0; j < n; ++j) {
    const uint16_t* row = k + j * d;
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
    for (int64_t i = 0; i < d; i += 16) {
      const __m512 kv = load_f16(row + i);
      a0 = _mm512_fmadd_ps(_mm512_loadu_ps(q0 + i), kv, a0);
      a1 = _mm512_fmadd_ps(_mm512_loadu_ps(q1 + i), kv, a1);
    }
    s0[j] = reduce(a0) * scale;
    s1[j] = reduce(a1) * scale;
  }
}

// out0 / out1 columns [0, 16 V) of a pass over all n rows, in registers.
template <int V>
void mix_columns(const float* p0, const float* p1, const uint16_t* v, int64_t n, int64_t d,
                 float* out0, float* out1) {
  __m512 o0[V], o1[V];
  for (int c = 0; c < V; ++c) o0[c] = _mm512_loadu_ps(out0 + 16 * c), o1[c] = _mm512_loadu_ps(out1 + 16 * c);
  for (int64_t j = 0; j < n; ++j) {
    const __m512 w0 = _mm512_set1_ps(p0[j]), w1 = _mm512_set1_ps(p1[j]);
    for (int c = 0; c < V; ++c) {
      const __m512 x = load_f16(v + j * d + 16 * c);
      o0[c] = _mm512_fmadd_ps(w0, x, o0[c]);
      o1[c] = _mm512_fmadd_ps(w1, x, o1[c]);
    }
  }
  for (int c = 0; c < V; ++c) _mm512_storeu_ps(out0 + 16 * c, o0[c]), _mm512_storeu_ps(out1 + 16 * c, o1[c]);
}

void mix_f16_pair(const float* p0, const float* p1, const uint16_t* v, int64_t n, int64_t d,
                  float* out0, float* out1) {
  if (!pair_fits(d)) {
    const VecKernels& single = *avx2_vec_kernels_impl();
    single.mix_f16(p0, v, n, d, out0);
    return single.mix_f16(p1, v, n, d, out1);
  }
  // Up to 128 columns per pass: 16 accumulators and the converted row stay in registers.
  for (int64_t c0 = 0; c0 < d; c0 += 128) {
    const auto* vc = v + c0;
    float *a = out0 + c0, *b = out1 + c0;
    switch ((d - c0 < 128 ? d - c0 : 128) / 16) {
      case 1: mix_columns<1>(p0, p1, vc, n, d, a, b); break;
      case 2: mix_columns<2>(p0, p1, vc, n, d, a, b); break;
      case 3: mix_columns<3>(p0, p1, vc, n, d, a, b); break;
      case 4: mix_columns<4>(p0, p1, vc, n, d, a, b); break;
      case 5: mix_columns<5>(p0, p1, vc, n, d, a, b); break;
      case 6: mix_columns<6>(p0, p1, vc, n, d, a, b); break;
      case 7: mix_columns<7>(p0, p1, vc, n, d, a, b); break;
      default: mix_columns<8>(p0, p1, vc, n, d, a, b); break;
    }
  }
}

}  // namespace

const VecKernels* avx512_vec_kernels_impl() {
  static const VecKernels k = [] {
    VecKernels set = *avx2_vec_kernels_impl();
    set.isa = "avx512";
    set.scores_f16_pair = scores_f16_pair;
    set.mix_f16_pair = mix_f16_pair;
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
