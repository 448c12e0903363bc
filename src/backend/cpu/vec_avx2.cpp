// AVX2 + F16C + FMA versions of vec.h; this file alone is compiled with those flags.
#include "backend/cpu/vec.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#include <cmath>

namespace afm::cpu {
namespace {

inline float hsum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 s2 = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s2, _mm_movehdup_ps(s2)));
}

inline __m256 load_f16(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

float dot_f32(const float* a, const float* b, int64_t n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
  }
  for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
  float s = hsum(_mm256_add_ps(s0, s1));
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

float dot_f16(const float* a, const uint16_t* b, int64_t n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), load_f16(b + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), load_f16(b + i + 8), s1);
  }
  for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), load_f16(b + i), s0);
  float s = hsum(_mm256_add_ps(s0, s1));
  for (; i < n; ++i) s += a[i] * _cvtsh_ss(b[i]);
  return s;
}

void axpy_f32(float alpha, const float* x, float* y, int64_t n) {
  const __m256 a = _mm256_set1_ps(alpha);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(a, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  }
  for (; i < n; ++i) y[i] += alpha * x[i];
}

void axpy_f16(float alpha, const uint16_t* x, float* y, int64_t n) {
  const __m256 a = _mm256_set1_ps(alpha);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(a, load_f16(x + i), _mm256_loadu_ps(y + i)));
  }
  for (; i < n; ++i) y[i] += alpha * _cvtsh_ss(x[i]);
}

void to_f16(const float* x, uint16_t* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
  }
  for (; i < n; ++i) y[i] = _cvtss_sh(x[i], _MM_FROUND_TO_NEAREST_INT);
}

void round_f16(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_ps(y + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) y[i] = _cvtsh_ss(_cvtss_sh(x[i], _MM_FROUND_TO_NEAREST_INT));
}

void scores_f32(const float* q, const float* k, int64_t n, int64_t d, float scale, float* s) {
  for (int64_t j = 0; j < n; ++j) s[j] = dot_f32(q, k + j * d, d) * scale;
}
void scores_f16(const float* q, const uint16_t* k, int64_t n, int64_t d, float scale, float* s) {
  for (int64_t j = 0; j < n; ++j) s[j] = dot_f16(q, k + j * d, d) * scale;
}
void mix_f32(const float* p, const float* v, int64_t n, int64_t d, float* out) {
  for (int64_t j = 0; j < n; ++j) axpy_f32(p[j], v + j * d, out, d);
}
void mix_f16(const float* p, const uint16_t* v, int64_t n, int64_t d, float* out) {
  for (int64_t j = 0; j < n; ++j) axpy_f16(p[j], v + j * d, out, d);
}

inline __m256 load_i8(const int8_t* p) {
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}

float dot_i8(const float* a, const int8_t* b, int64_t n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), load_i8(b + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), load_i8(b + i + 8), s1);
  }
  for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), load_i8(b + i), s0);
  float s = hsum(_mm256_add_ps(s0, s1));
  for (; i < n; ++i) s += a[i] * static_cast<float>(b[i]);
  return s;
}

void scores_q8(const float* q, const int8_t* k, const float* rs, int64_t n, int64_t d, float scale,
               float* s) {
  for (int64_t j = 0; j < n; ++j) s[j] = dot_i8(q, k + j * d, d) * (rs ? rs[j] : 1.0f) * scale;
}

void mix_q8(const float* p, const int8_t* v, const float* rs, float uniform, int64_t n, int64_t d,
            float* out) {
  for (int64_t j = 0; j < n; ++j) {
    const float alpha = p[j] * (rs ? rs[j] : uniform);
    const __m256 a = _mm256_set1_ps(alpha);
    const int8_t* x = v + j * d;
    int64_t i = 0;
    for (; i + 8 <= d; i += 8) {
      _mm256_storeu_ps(out + i, _mm256_fmadd_ps(a, load_i8(x + i), _mm256_loadu_ps(out + i)));
    }
    for (; i < d; ++i) out[i] += alpha * static_cast<float>(x[i]);
  }
}

// exp(x) to about 2 ulp: 2^n * p(r) with r = x - n ln2 (Cody-Waite split) and a degree-6
// polynomial; inputs are clamped to where the float result is finite or flushes to zero (the
// clamps name x second, so a NaN passes through them and the result is NaN).
inline __m256 exp_ps(__m256 x) {
  x = _mm256_min_ps(_mm256_set1_ps(88.3f), _mm256_max_ps(_mm256_set1_ps(-87.3f), x));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

void silu_mul(const float* gate, const float* up, float* out, int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(gate + i);
    const __m256 e = exp_ps(_mm256_sub_ps(_mm256_setzero_ps(), g));
    const __m256 s = _mm256_div_ps(g, _mm256_add_ps(one, e));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(s, _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) {
    float e;
    const __m256 ev = exp_ps(_mm256_set1_ps(-gate[i]));
    e = _mm256_cvtss_f32(ev);
    out[i] = gate[i] / (1.0f + e) * up[i];
  }
}

void gelu_tanh_mul(const float* gate, const float* up, float* out, int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f), c3 = _mm256_set1_ps(0.044715f);
  const __m256 neg_k = _mm256_set1_ps(-1.5957691216057308f);  // -2 sqrt(2 / pi)
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(gate + i);
    const __m256 x3 = _mm256_mul_ps(_mm256_mul_ps(x, x), x);
    const __m256 e = exp_ps(_mm256_mul_ps(neg_k, _mm256_fmadd_ps(c3, x3, x)));
    const __m256 g = _mm256_div_ps(x, _mm256_add_ps(one, e));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(g, _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) {
    const float x = gate[i];
    const __m256 ev = exp_ps(_mm256_set1_ps(-1.5957691216057308f * (x + 0.044715f * x * x * x)));
    out[i] = x / (1.0f + _mm256_cvtss_f32(ev)) * up[i];
  }
}

float exp_scalar(float x) { return _mm256_cvtss_f32(exp_ps(_mm256_set1_ps(x))); }

void softmax(float* x, int64_t n) {
  __m256 m = _mm256_set1_ps(-INFINITY);
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(x + j));
  __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
  m4 = _mm_max_ss(m4, _mm_shuffle_ps(m4, m4, 1));
  float max_value = _mm_cvtss_f32(m4);
  for (; j < n; ++j) max_value = std::max(max_value, x[j]);

  const __m256 shift = _mm256_set1_ps(max_value);
  __m256 sum8 = _mm256_setzero_ps();
  for (j = 0; j + 8 <= n; j += 8) {
    const __m256 e = exp_ps(_mm256_sub_ps(_mm256_loadu_ps(x + j), shift));
    _mm256_storeu_ps(x + j, e);
    sum8 = _mm256_add_ps(sum8, e);
  }
  float sum = hsum(sum8);
  for (; j < n; ++j) sum += x[j] = exp_scalar(x[j] - max_value);

  const float inv = 1.0f / sum;
  const __m256 inv8 = _mm256_set1_ps(inv);
  for (j = 0; j + 8 <= n; j += 8) _mm256_storeu_ps(x + j, _mm256_mul_ps(_mm256_loadu_ps(x + j), inv8));
  for (; j < n; ++j) x[j] *= inv;
}

// ---- grouped-query attention rows: each f16 cache row converted once for 2 or 4 query rows --
// Bit-identical to scores_f16 / mix_f16 on each row alone: scores keep dot_f16's two 8-lane
// accumulators per 16-value chunk and its reduction; mix applies axpy_f16's fma per key in
// order, lane by lane, with the outputs held in registers across the keys.

// Lengths the row kernels take: dot_f16's main loop only, no tails.
bool rows_fit(int64_t d) { return d % 16 == 0; }

template <int NQ>
void scores_rows(const float* const q[NQ], const uint16_t* k, int64_t n, int64_t d, float scale,
                 float* const s[NQ]) {
  for (int64_t j = 0; j < n; ++j) {
    const uint16_t* row = k + j * d;
    __m256 a0[NQ], a1[NQ];
    for (int i = 0; i < NQ; ++i) a0[i] = a1[i] = _mm256_setzero_ps();
    for (int64_t c = 0; c < d; c += 16) {
      const __m256 k0 = load_f16(row + c), k1 = load_f16(row + c + 8);
      for (int i = 0; i < NQ; ++i) {
        a0[i] = _mm256_fmadd_ps(_mm256_loadu_ps(q[i] + c), k0, a0[i]);
        a1[i] = _mm256_fmadd_ps(_mm256_loadu_ps(q[i] + c + 8), k1, a1[i]);
      }
    }
    for (int i = 0; i < NQ; ++i) s[i][j] = hsum(_mm256_add_ps(a0[i], a1[i])) * scale;
  }
}

// Columns [c0, c0 + 8 V) of every row's output over all n keys, NQ x V accumulators.
template <int NQ, int V>
void mix_columns(const float* const p[NQ], const uint16_t* v, int64_t n, int64_t d,
                 float* const out[NQ], int64_t c0) {
  __m256 o[NQ][V];
  for (int i = 0; i < NQ; ++i)
    for (int c = 0; c < V; ++c) o[i][c] = _mm256_loadu_ps(out[i] + c0 + 8 * c);
  for (int64_t j = 0; j < n; ++j) {
    __m256 w[NQ];
    for (int i = 0; i < NQ; ++i) w[i] = _mm256_set1_ps(p[i][j]);
    for (int c = 0; c < V; ++c) {
      const __m256 x = load_f16(v + j * d + c0 + 8 * c);
      for (int i = 0; i < NQ; ++i) o[i][c] = _mm256_fmadd_ps(w[i], x, o[i][c]);
    }
  }
  for (int i = 0; i < NQ; ++i)
    for (int c = 0; c < V; ++c) _mm256_storeu_ps(out[i] + c0 + 8 * c, o[i][c]);
}

// Passes of 8 x kWidth columns: 2 x 6 or 4 x 2 accumulators, the weights and the row fit the
// 16 registers. d is a multiple of 16, so every pass has an even number of columns.
template <int NQ>
void mix_rows(const float* const p[NQ], const uint16_t* v, int64_t n, int64_t d, float* const out[NQ]) {
  constexpr int kWidth = NQ <= 2 ? 6 : 2;
  for (int64_t c0 = 0; c0 < d; c0 += 8 * kWidth) {
    switch (std::min<int64_t>(kWidth, (d - c0) / 8)) {
      case 2: mix_columns<NQ, 2>(p, v, n, d, out, c0); break;
      case 4: if constexpr (kWidth >= 4) mix_columns<NQ, 4>(p, v, n, d, out, c0); break;
      default: if constexpr (kWidth >= 6) mix_columns<NQ, 6>(p, v, n, d, out, c0); break;
    }
  }
}

void scores_f16_pair(const float* q0, const float* q1, const uint16_t* k, int64_t n, int64_t d,
                     float scale, float* s0, float* s1) {
  if (!rows_fit(d)) {
    scores_f16(q0, k, n, d, scale, s0);
    return scores_f16(q1, k, n, d, scale, s1);
  }
  const float* q[2] = {q0, q1};
  float* const s[2] = {s0, s1};
  scores_rows<2>(q, k, n, d, scale, s);
}

void mix_f16_pair(const float* p0, const float* p1, const uint16_t* v, int64_t n, int64_t d,
                  float* out0, float* out1) {
  if (!rows_fit(d)) {
    mix_f16(p0, v, n, d, out0);
    return mix_f16(p1, v, n, d, out1);
  }
  const float* p[2] = {p0, p1};
  float* const out[2] = {out0, out1};
  mix_rows<2>(p, v, n, d, out);
}

void scores_f16_quad(const float* const q[4], const uint16_t* k, int64_t n, int64_t d, float scale,
                     float* const s[4]) {
  if (!rows_fit(d)) {
    for (int i = 0; i < 4; ++i) scores_f16(q[i], k, n, d, scale, s[i]);
    return;
  }
  scores_rows<4>(q, k, n, d, scale, s);
}

void mix_f16_quad(const float* const p[4], const uint16_t* v, int64_t n, int64_t d, float* const out[4]) {
  if (!rows_fit(d)) {
    for (int i = 0; i < 4; ++i) mix_f16(p[i], v, n, d, out[i]);
    return;
  }
  mix_rows<4>(p, v, n, d, out);
}

}  // namespace

const VecKernels* avx2_vec_kernels_impl() {
  static const VecKernels k{"avx2", dot_f32, dot_f16, axpy_f32, axpy_f16, to_f16, round_f16, scores_f32, scores_f16, mix_f32, mix_f16, scores_q8, mix_q8, silu_mul, gelu_tanh_mul, softmax, scores_f16_pair, mix_f16_pair, scores_f16_quad, mix_f16_quad};
  return &k;
}

}  // namespace afm::cpu
#else
namespace afm::cpu {
const VecKernels* avx2_vec_kernels_impl() { return nullptr; }
}  // namespace afm::cpu
#endif
