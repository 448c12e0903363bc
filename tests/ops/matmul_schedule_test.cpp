// matmul_group splits a group's concatenated weight bytes between the threads (ops/matmul.cpp),
// so where a thread's share ends moves with the thread count: inside a matrix, between two, on
// rows that whole-16-row layouts do not cover. Whatever the count, every output is written
// and equals the one-thread product bit for bit (the outputs start as NaN, so rows no thread
// took show). The group mixes types (f16 in float groups, q4_0 interleaved, q4_k in lanes, where
// the kernel set has those copies; q8_0 in the file's layout) and row counts that are not
// multiples of 16, whose last rows take the file's layout.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "backend/cpu/gemm.h"
#include "base/thread_pool.h"
#include "ops/matmul.h"
#include "quant/tensor_encode.h"

namespace afm {
namespace {

using gguf::TensorType;

struct Weights {
  std::vector<uint8_t> bytes, lanes;  // lanes: the whole 16-row groups' copy, if any
  ops::Matrix m;
};

Weights make_weights(TensorType type, int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<float> values(rows * cols);
  for (float& v : values) v = normal(rng);
  Weights w;
  const size_t row_bytes = ops::row_bytes_for(type, cols);
  if (type == TensorType::kQ4_K) {
    // Not encodable by afm: random codes with small finite scales, as the K-quant tests do.
    w.bytes.resize(rows * row_bytes);
    for (uint8_t& b : w.bytes) b = static_cast<uint8_t>(rng());
    for (size_t blk = 0; blk < w.bytes.size() / 144; ++blk) {
      const uint16_t scale[2] = {0x1c00, 0x9c00};  // 2^-8 and -2^-8 in f16
      std::memcpy(&w.bytes[blk * 144], scale, sizeof(scale));
    }
  } else {
    quant::encode_tensor(values.data(), values.size(), type, w.bytes);
  }
  w.m = ops::Matrix{type, w.bytes.data(), rows, cols, row_bytes};
  // The copies made at load (ops/interleaved_weights.h), where this CPU's kernel set has them:
  // f16 float groups, q4_k lanes; q8_0 stays in the file's layout.
  const cpu::InterleavedKernels* il = cpu::best_gemm_kernels().interleaved;
  void (*copy)(const void*, size_t, int64_t, int64_t, void*) = nullptr;
  if (il != nullptr && type == TensorType::kF16) copy = il->interleave_16bit;
  if (il != nullptr && type == TensorType::kQ4_0) copy = il->interleave_q4_0;
  if (il != nullptr && il->k_lanes != nullptr && type == TensorType::kQ4_K) copy = il->k_lanes->interleave_q4_k;
  if (copy != nullptr) {
    w.lanes.resize(w.bytes.size());
    copy(w.bytes.data(), row_bytes, rows / 16 * 16, cols, w.lanes.data());
    w.m.interleaved = w.lanes.data();
  }
  return w;
}

// y for every output of the group, outputs back to back.
std::vector<float> group_product(const std::vector<Weights>& ws, const std::vector<float>& x, int64_t n_tok,
                                 int64_t cols, int threads) {
  ThreadPool pool(threads);
  ops::ActivationScratch scratch;
  ops::Activations act(x.data(), n_tok, cols, scratch);
  size_t total = 0;
  for (const Weights& w : ws) total += n_tok * w.m.rows;
  std::vector<float> y(total, NAN);
  std::vector<ops::MatmulOutput> outs;
  size_t offset = 0;
  for (const Weights& w : ws) {
    outs.push_back({&w.m, y.data() + offset});
    offset += n_tok * w.m.rows;
  }
  // matmul_group takes an initializer list: groups in the engine have at most three outputs.
  ops::matmul_group(act, {outs[0], outs[1], outs[2]}, pool);
  ops::matmul(act, ws[3].m, y.data() + offset - n_tok * ws[3].m.rows, pool);
  return y;
}

TEST(MatmulSchedule, EveryThreadCountGivesTheOneThreadProduct) {
  const int64_t cols = 256;
  std::vector<Weights> ws;
  ws.push_back(make_weights(TensorType::kF16, 100, cols, 1));
  ws.push_back(make_weights(TensorType::kQ4_0, 37, cols, 2));
  ws.push_back(make_weights(TensorType::kQ4_K, 83, cols, 3));
  ws.push_back(make_weights(TensorType::kQ8_0, 301, cols, 4));
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int64_t n_tok : {1, 2, 9, 64}) {
    std::vector<float> x(n_tok * cols);
    for (float& v : x) v = normal(rng);
    const std::vector<float> want = group_product(ws, x, n_tok, cols, 1);
    for (size_t i = 0; i < want.size(); ++i) ASSERT_FALSE(std::isnan(want[i])) << "one thread, output " << i;
    for (int threads : {2, 3, 7}) {
      const std::vector<float> got = group_product(ws, x, n_tok, cols, threads);
      for (size_t i = 0; i < want.size(); ++i) {
        // Bitwise; want holds no NaN, so an output no slice wrote differs here too.
        ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(float)), 0)
            << "tokens " << n_tok << ", threads " << threads << ", output " << i << ": " << got[i]
            << " against " << want[i];
      }
    }
  }
}

}  // namespace
}  // namespace afm
