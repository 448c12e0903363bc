#include <algorithm>
#include <cmath>

#include "backend/cpu/vec.h"
#include "base/cpu_features.h"
#include "base/half.h"

namespace afm::cpu {
namespace {

float dot_f32(const float* a, const float* b, int64_t n) {
  float s = 0;
  for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}
float dot_f16(const float* a, const uint16_t* b, int64_t n) {
  float s = 0;
  for (int64_t i = 0; i < n; ++i) s += a[i] * f16_to_f32(b[i]);
  return s;
}
void axpy_f32(float alpha, const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}
void axpy_f16(float alpha, const uint16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += alpha * f16_to_f32(x[i]);
}
void to_f16(const float* x, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = f32_to_f16(x[i]);
}

void silu_mul(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void gelu_tanh_mul(const float* gate, const float* up, float* out, int64_t n) {
  constexpr float kTwoSqrt2OverPi = 1.5957691216057308f;  // 2 sqrt(2 / pi)
  for (int64_t i = 0; i < n; ++i) {
    const float x = gate[i];
    out[i] = x / (1.0f + std::exp(-kTwoSqrt2OverPi * (x + 0.044715f * x * x * x))) * up[i];
  }
}

void softmax(float* x, int64_t n) {
  float max_value = x[0];
  for (int64_t j = 1; j < n; ++j) max_value = std::max(max_value, x[j]);
  float sum = 0;
  for (int64_t j = 0; j < n; ++j) {
    x[j] = std::exp(x[j] - max_value);
    sum += x[j];
  }
  const float inv = 1.0f / sum;
  for (int64_t j = 0; j < n; ++j) x[j] *= inv;
}

void round_f16(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = f16_to_f32(f32_to_f16(x[i]));
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

float dot_i8(const float* a, const int8_t* b, int64_t n) {
  float s = 0;
  for (int64_t i = 0; i < n; ++i) s += a[i] * static_cast<float>(b[i]);
  return s;
}
void scores_q8(const float* q, const int8_t* k, const float* rs, int64_t n, int64_t d, float scale,
               float* s) {
  for (int64_t j = 0; j < n; ++j) s[j] = dot_i8(q, k + j * d, d) * (rs ? rs[j] : 1.0f) * scale;
}
void mix_q8(const float* p, const int8_t* v, const float* rs, float uniform, int64_t n, int64_t d,
            float* out) {
  for (int64_t j = 0; j < n; ++j) {
    const float a = p[j] * (rs ? rs[j] : uniform);
    for (int64_t i = 0; i < d; ++i) out[i] += a * static_cast<float>(v[j * d + i]);
  }
}

}  // namespace

const VecKernels* avx2_vec_kernels_impl();
const VecKernels* avx512_vec_kernels_impl();

const VecKernels& scalar_vec_kernels() {
  static const VecKernels k{"scalar", dot_f32, dot_f16, axpy_f32, axpy_f16, to_f16, round_f16, scores_f32, scores_f16, mix_f32, mix_f16, scores_q8, mix_q8, silu_mul, gelu_tanh_mul, softmax, nullptr, nullptr, nullptr, nullptr};
  return k;
}

const VecKernels* avx2_vec_kernels() {
  return cpu_features().avx2 ? avx2_vec_kernels_impl() : nullptr;
}

const VecKernels* avx512_vec_kernels() {
  const CpuFeatures& f = cpu_features();
  return f.avx2 && f.avx512 ? avx512_vec_kernels_impl() : nullptr;
}

const VecKernels& best_vec_kernels() {
  static const VecKernels* best = avx512_vec_kernels() ? avx512_vec_kernels()
                                  : avx2_vec_kernels() ? avx2_vec_kernels()
                                                       : &scalar_vec_kernels();
  return *best;
}

}  // namespace afm::cpu
