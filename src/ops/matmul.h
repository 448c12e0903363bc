// y = x · Wᵀ for every weight type, split across the thread pool by output rows.
//
// Activations wraps one input batch x (T, K) and quantises it to int8 blocks at most once, the
// first time a quantized weight needs it, so q, k and v (or gate and up) share the work:
// 32-value blocks for q8_0 / q4_0 and ggml's types, 128-value blocks for q2_b, 256-value
// blocks for the K-quants of a kernel set that takes them (GgmlBlockKernels).
// matmul_group runs several products over the same input in one parallel region (one
// fork/join instead of one per matrix). No allocation after the scratch has grown once.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "backend/cpu/gemm.h"
#include "base/thread_pool.h"
#include "ops/matrix.h"

namespace afm::ops {

// Reusable storage for the converted copies of an activation batch (grows, never shrinks).
struct ActivationScratch {
  std::vector<cpu::ActBlock> q8;
  std::vector<cpu::ActBlock128> q8_128;
  std::vector<cpu::ActBlock256> q8_256;
  std::vector<float> f16;
  // Sizes both for inputs of up to tokens x k. Code running on a ThreadTeam must reserve
  // first: Activations then never resizes (members would race).
  void reserve(int64_t tokens, int64_t k);
};

class Activations {
 public:
  // x: (tokens, k) floats, rows `k` apart.
  Activations(const float* x, int64_t tokens, int64_t k, ActivationScratch& scratch);

  const float* f32() const { return x_; }
  const cpu::ActBlock* q8(Workers& pool);  // k must be a multiple of 32
  const cpu::ActBlock128* q8_128(Workers& pool);  // k must be a multiple of 128
  const cpu::ActBlock256* q8_256(Workers& pool);  // k must be a multiple of 256
  // x rounded through f16, for f16 weights: the product f16 weights x f16 activations that
  // llama.cpp and f16 PyTorch compute, so greedy outputs agree with theirs.
  const float* f16_rounded(Workers& pool);
  int64_t tokens() const { return tokens_; }
  int64_t k() const { return k_; }
  // The first n tokens get outputs bit-identical to a product over fewer than 4 tokens (the
  // kernels' per-token path); the rest may take the faster batched path. A batch of sequences
  // puts first the rows of sequences that alone would have had fewer than 4, so that every
  // sequence's results equal its one-at-a-time forward pass exactly.
  void set_per_token_rows(int64_t n) { per_token_ = n; }
  int64_t per_token_rows() const { return per_token_; }

 private:
  const float* x_;
  int64_t tokens_, k_;
  int64_t per_token_ = 0;
  template <class Block>
  const Block* quantized(std::vector<Block>& store, bool& done, int64_t per_block,
                         void (*quantize)(const float*, Block*, int64_t), Workers& pool);

  ActivationScratch& scratch_;
  bool quantized_ = false, quantized_128_ = false, quantized_256_ = false, rounded_ = false;
};

struct MatmulOutput {
  const Matrix* w;
  float* y;  // (tokens, w->rows)
};

// Every w must have cols == x.k(). Runs all products, then returns.
void matmul_group(Activations& x, std::initializer_list<MatmulOutput> outputs, Workers& pool);

inline void matmul(Activations& x, const Matrix& w, float* y, Workers& pool) {
  matmul_group(x, {{&w, y}}, pool);
}

}  // namespace afm::ops
