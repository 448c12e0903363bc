// Vector primitives: attention over the KV cache (rows f32, f16 or int8), its softmax, and the
// SwiGLU / GeGLU activations.
// Scalar references plus an AVX2/F16C/FMA set and an AVX-512 set (the AVX2 one with 16-lane
// grouped-query attention rows), chosen at run time (best_vec_kernels()). Both SIMD sets have
// attention rows for 2 or 4 query rows, bit-identical to the AVX2 single-row functions.
// Kernels never allocate, throw or log.
#pragma once

#include <cstdint>

namespace afm::cpu {

struct VecKernels {
  const char* isa;
  float (*dot_f32)(const float* a, const float* b, int64_t n);
  float (*dot_f16)(const float* a, const uint16_t* b, int64_t n);
  void (*axpy_f32)(float alpha, const float* x, float* y, int64_t n);   // y += alpha * x
  void (*axpy_f16)(float alpha, const uint16_t* x, float* y, int64_t n);
  void (*f32_to_f16)(const float* x, uint16_t* y, int64_t n);
  // y[i] = x[i] rounded to the nearest f16 and back (x and y may alias).
  void (*round_f16)(const float* x, float* y, int64_t n);
  // Attention over n cached rows of d values (f32 or f16, rows d apart):
  //   scores[j] = dot(q, k_j) * scale;   out += sum_j p[j] * v_j
  void (*scores_f32)(const float* q, const float* k, int64_t n, int64_t d, float scale, float* scores);
  void (*scores_f16)(const float* q, const uint16_t* k, int64_t n, int64_t d, float scale, float* scores);
  void (*mix_f32)(const float* p, const float* v, int64_t n, int64_t d, float* out);
  void (*mix_f16)(const float* p, const uint16_t* v, int64_t n, int64_t d, float* out);
  // int8 rows, row j worth row_scale(j) * v_j with row_scale(j) = row_scales[j], or 1 (scores)
  // / `uniform` (mix) when row_scales is null (a learned per-layer scale):
  //   scores[j] = dot(q, k_j) * row_scale(j) * scale;   out += sum_j p[j] * row_scale(j) * v_j
  void (*scores_q8)(const float* q, const int8_t* k, const float* row_scales, int64_t n, int64_t d,
                    float scale, float* scores);
  void (*mix_q8)(const float* p, const int8_t* v, const float* row_scales, float uniform,
                 int64_t n, int64_t d, float* out);
  // out = silu(gate) * up = gate / (1 + exp(-gate)) * up (SwiGLU); out may alias gate.
  void (*silu_mul)(const float* gate, const float* up, float* out, int64_t n);
  // out = gelu_tanh(gate) * up (GeGLU), gelu with PyTorch's approximate="tanh":
  // 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)), u = sqrt(2 / pi) (x + 0.044715 x^3); out may
  // alias gate.
  void (*gelu_tanh_mul)(const float* gate, const float* up, float* out, int64_t n);
  // x = softmax(x) over n > 0 values: exp(x - max x) / sum. The SIMD sets use a polynomial exp
  // (within 2 ulp of std::exp) and sum in vector lanes; a NaN input gives NaN outputs.
  void (*softmax)(float* x, int64_t n);
  // Two query heads that share one KV head (grouped-query attention) against the same n f16
  // rows: scores_f16 / mix_f16 for (q0, s0, p0, out0) and (q1, s1, p1, out1), each bit-identical
  // to those functions on its own; the AVX2 and AVX-512 sets convert each row once for both
  // heads and keep the outputs in registers. Null in the scalar set (callers take one head at a
  // time).
  void (*scores_f16_pair)(const float* q0, const float* q1, const uint16_t* k, int64_t n, int64_t d,
                          float scale, float* s0, float* s1);
  void (*mix_f16_pair)(const float* p0, const float* p1, const uint16_t* v, int64_t n, int64_t d,
                       float* out0, float* out1);
  // The same for four query rows (two heads of two consecutive queries) over rows all four see:
  // each row's scores and mixed output bit-identical to scores_f16 / mix_f16 alone. Null where
  // the set has no such kernel.
  void (*scores_f16_quad)(const float* const q[4], const uint16_t* k, int64_t n, int64_t d,
                          float scale, float* const s[4]);
  void (*mix_f16_quad)(const float* const p[4], const uint16_t* v, int64_t n, int64_t d,
                       float* const out[4]);
};

const VecKernels& scalar_vec_kernels();
const VecKernels* avx2_vec_kernels();  // null without AVX2/F16C/FMA
const VecKernels* avx512_vec_kernels();  // null without AVX-512 F (and AVX2/F16C/FMA)
const VecKernels& best_vec_kernels();

}  // namespace afm::cpu
