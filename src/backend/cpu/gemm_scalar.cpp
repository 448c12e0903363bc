// Reference kernels: the plainest correct code, in the same per-block order as the SIMD ones.
#include <cmath>

#include "backend/cpu/gemm.h"
#include "base/half.h"
#include "quant/balanced_2bit.h"
#include "quant/block_formats.h"

namespace afm::cpu {
namespace {

template <class ToFloat>
void gemm_float(const void* w, size_t w_row_bytes, int64_t n_rows, const void* x,
                size_t x_row_bytes, int64_t n_tok, int64_t k, float* y, int64_t y_stride,
                ToFloat to_float) {
  const auto* wb = static_cast<const uint8_t*>(w);
  const auto* xb = static_cast<const uint8_t*>(x);
  for (int64_t t = 0; t < n_tok; ++t) {
    const auto* xr = reinterpret_cast<const float*>(xb + t * x_row_bytes);
    for (int64_t r = 0; r < n_rows; ++r) {
      const uint8_t* wr = wb + r * w_row_bytes;
      double sum = 0;  // the reference may be more exact than the kernels it checks
      for (int64_t i = 0; i < k; ++i) sum += static_cast<double>(to_float(wr, i)) * xr[i];
      y[t * y_stride + r] = static_cast<float>(sum);
    }
  }
}

void gemm_f32(const void* w, size_t wrb, int64_t nr, const void* x, size_t xrb, int64_t nt,
              int64_t k, float* y, int64_t ys) {
  gemm_float(w, wrb, nr, x, xrb, nt, k, y, ys, [](const uint8_t* row, int64_t i) {
    return reinterpret_cast<const float*>(row)[i];
  });
}

void gemm_f16(const void* w, size_t wrb, int64_t nr, const void* x, size_t xrb, int64_t nt,
              int64_t k, float* y, int64_t ys) {
  gemm_float(w, wrb, nr, x, xrb, nt, k, y, ys, [](const uint8_t* row, int64_t i) {
    return f16_to_f32(reinterpret_cast<const uint16_t*>(row)[i]);
  });
}

void gemm_bf16(const void* w, size_t wrb, int64_t nr, const void* x, size_t xrb, int64_t nt,
               int64_t k, float* y, int64_t ys) {
  gemm_float(w, wrb, nr, x, xrb, nt, k, y, ys, [](const uint8_t* row, int64_t i) {
    return bf16_to_f32(reinterpret_cast<const uint16_t*>(row)[i]);
  });
}

// The integer part of one block's dot product; Block is BlockQ8_0 or BlockQ4_0.
int32_t block_dot(const quant::BlockQ8_0& w, const ActBlock& a) {
  int32_t s = 0;
  for (int i = 0; i < 32; ++i) s += w.q[i] * a.q[i];
  return s;
}

int32_t block_dot(const quant::BlockQ4_0& w, const ActBlock& a) {
  int32_t s = 0;
  for (int i = 0; i < 16; ++i) {
    s += (w.qs[i] & 0x0f) * a.q[i] + (w.qs[i] >> 4) * a.q[i + 16];
  }
  return s - 8 * a.sum;
}

template <class Block>
void gemm_quant(const void* w, size_t w_row_bytes, int64_t n_rows, const void* x,
                size_t x_row_bytes, int64_t n_tok, int64_t k, float* y, int64_t y_stride) {
  const int64_t nb = k / 32;
  for (int64_t t = 0; t < n_tok; ++t) {
    const auto* xr = reinterpret_cast<const ActBlock*>(static_cast<const uint8_t*>(x) +
                                                       t * x_row_bytes);
    for (int64_t r = 0; r < n_rows; ++r) {
      const auto* wr =
          reinterpret_cast<const Block*>(static_cast<const uint8_t*>(w) + r * w_row_bytes);
      float sum = 0;
      for (int64_t b = 0; b < nb; ++b) {
        sum += static_cast<float>(block_dot(wr[b], xr[b])) * (f16_to_f32(wr[b].d) * xr[b].d);
      }
      y[t * y_stride + r] = sum;
    }
  }
}

// One q2_b block against its activation block: the exact integer sum of (2q) x a - 3 sum(a),
// times (d_w / 2) * d_a, as the SIMD kernels compute it.
float q2b_block_dot(const quant::BlockQ2B& w, const ActBlock128& a) {
  int32_t s = -3 * a.sum;
  for (int plane = 0; plane < 4; ++plane) {
    for (int j = 0; j < 32; ++j) s += 2 * ((w.qs[j] >> (2 * plane)) & 3) * a.q[32 * plane + j];
  }
  return static_cast<float>(s) * (0.5f * f16_to_f32(w.d) * a.d);
}

void gemm_q2_b(const void* w, size_t w_row_bytes, int64_t n_rows, const void* x,
               size_t x_row_bytes, int64_t n_tok, int64_t k, float* y, int64_t y_stride) {
  const int64_t nb = k / 128;
  for (int64_t t = 0; t < n_tok; ++t) {
    const auto* xr = reinterpret_cast<const ActBlock128*>(static_cast<const uint8_t*>(x) +
                                                          t * x_row_bytes);
    for (int64_t r = 0; r < n_rows; ++r) {
      const auto* wr = reinterpret_cast<const quant::BlockQ2B*>(static_cast<const uint8_t*>(w) +
                                                                r * w_row_bytes);
      float sum = 0;
      for (int64_t b = 0; b < nb; ++b) sum += q2b_block_dot(wr[b], xr[b]);
      y[t * y_stride + r] = sum;
    }
  }
}

}  // namespace

const GemmKernels& scalar_gemm_kernels() {
  static const GemmKernels kernels{"scalar", gemm_f32, gemm_f16, gemm_bf16,
                                   gemm_quant<quant::BlockQ8_0>, gemm_quant<quant::BlockQ4_0>,
                                   gemm_quant<quant::BlockQ8_0>, gemm_quant<quant::BlockQ4_0>,
                                   gemm_q2_b, &scalar_ggml_block_kernels(), &scalar_ggml_block_kernels(),
                                   quantize_activations,
                                   quantize_activations_128, quantize_activations_256, nullptr};
  return kernels;
}

namespace {

// One block of n values: d = max|x| / 127, q = round-half-even(x / d). A block holding NaN or
// inf gets d = that value and q = 0.
float quantize_block(const float* x, int n, int8_t* q) {
  float amax = 0;
  for (int i = 0; i < n; ++i) {
    amax = std::isnan(x[i]) ? x[i] : std::fmax(amax, std::fabs(x[i]));
    if (std::isnan(amax)) break;
  }
  if (!std::isfinite(amax)) {  // keep the block non-finite in the result
    for (int i = 0; i < n; ++i) q[i] = 0;
    return amax;
  }
  float d = amax / 127.0f;
  float inv = d != 0 ? 1.0f / d : 0.0f;
  // A subnormal scale makes 1/d overflow (x * inf is no integer): such a block is ~0 anyway.
  if (!std::isfinite(inv)) d = 0, inv = 0;
  for (int i = 0; i < n; ++i) q[i] = static_cast<int8_t>(std::nearbyint(x[i] * inv));
  return d;
}

int32_t sum_of(const int8_t* q, int n) {
  int32_t sum = 0;
  for (int i = 0; i < n; ++i) sum += q[i];
  return sum;
}

template <int N, class Block>
void quantize_blocks(const float* x, Block* y, int64_t k) {
  for (int64_t b = 0; b < k / N; ++b) {
    y[b].d = quantize_block(x + b * N, N, y[b].q);
    y[b].sum = sum_of(y[b].q, N);
  }
}

}  // namespace

void quantize_activations(const float* x, ActBlock* y, int64_t k) { quantize_blocks<32>(x, y, k); }

void quantize_activations_128(const float* x, ActBlock128* y, int64_t k) {
  quantize_blocks<128>(x, y, k);
}

void quantize_activations_256(const float* x, ActBlock256* y, int64_t k) {
  for (int64_t b = 0; b < k / 256; ++b) {
    y[b].d = quantize_block(x + b * 256, 256, y[b].q);
    for (int g = 0; g < 16; ++g) y[b].sums[g] = static_cast<int16_t>(sum_of(y[b].q + 16 * g, 16));
  }
}

}  // namespace afm::cpu
