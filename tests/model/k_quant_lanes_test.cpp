// q4_k / q6_k matrices with a lanes copy (backend/cpu/k_quant_lanes.h) in matmul: the same
// products as the file's layout within float rounding, at 1 and 2 threads, for rows in and out
// of whole 16-row groups; and the per-token rows of a batch (Activations::set_per_token_rows)
// bit-identical to a product with that token alone, also for batches past the copy's
// max_tokens, whose other tokens take the file layout's batched path.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "backend/cpu/gemm.h"
#include "base/half.h"
#include "base/thread_pool.h"
#include "ops/matmul.h"
#include "quant/tensor_encode.h"

namespace afm {
namespace {

using gguf::TensorType;

struct LaneType {
  TensorType type;
  std::vector<int> f16_fields;  // byte offsets of the block's f16 scales
  void (*cpu::KQuantLaneKernels::*interleave)(const void*, size_t, int64_t, int64_t, void*);
};

// Random codes with small finite scales.
std::vector<uint8_t> random_blocks(const LaneType& lt, int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  const size_t block_bytes = gguf::tensor_type_traits(lt.type).block_bytes;
  std::vector<uint8_t> w(rows * quant::encoded_bytes(lt.type, cols));
  for (uint8_t& b : w) b = static_cast<uint8_t>(rng());
  std::uniform_real_distribution<float> exponent(-9.0f, -5.0f);
  for (size_t blk = 0; blk < w.size() / block_bytes; ++blk) {
    for (int off : lt.f16_fields) {
      const uint16_t h = f32_to_f16(std::exp2(exponent(rng)) * (rng() % 2 ? 1.0f : -1.0f));
      std::memcpy(&w[blk * block_bytes + off], &h, 2);
    }
  }
  return w;
}

std::vector<float> product(const ops::Matrix& m, const float* x, int64_t n_tok, int64_t per_token, int threads) {
  ThreadPool pool(threads);
  ops::ActivationScratch scratch;
  ops::Activations act(x, n_tok, m.cols, scratch);
  act.set_per_token_rows(per_token);
  std::vector<float> y(n_tok * m.rows, NAN);
  ops::matmul(act, m, y.data(), pool);
  return y;
}

TEST(KQuantLanes, MatmulMatchesTheFileLayoutAndKeepsPerTokenRowsExact) {
  const cpu::InterleavedKernels* il = cpu::best_gemm_kernels().interleaved;
  if (il == nullptr || il->k_lanes == nullptr) GTEST_SKIP() << "this CPU's kernels have no K-quant lanes layout";
  const LaneType types[] = {
      {TensorType::kQ4_K, {0, 2}, &cpu::KQuantLaneKernels::interleave_q4_k},
      {TensorType::kQ6_K, {208}, &cpu::KQuantLaneKernels::interleave_q6_k},
  };
  const int64_t rows = 16 * 5 + 7, cols = 512;  // five whole groups and a ragged tail
  for (const LaneType& lt : types) {
    const std::vector<uint8_t> w = random_blocks(lt, rows, cols, 3);
    const size_t row_bytes = quant::encoded_bytes(lt.type, cols);
    std::vector<uint8_t> copy(w.size());
    (il->k_lanes->*lt.interleave)(w.data(), row_bytes, rows / 16 * 16, cols, copy.data());
    ops::Matrix file{lt.type, w.data(), rows, cols, row_bytes};
    ops::Matrix lanes = file;
    lanes.interleaved = copy.data();
    std::mt19937 rng(5);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (int64_t n_tok : {1, 3, 20, 70}) {  // 20: past q6_k's max_tokens, 70: past q4_k's too
      std::vector<float> x(n_tok * cols);
      for (float& v : x) v = normal(rng);
      for (int64_t per_token : {int64_t{0}, std::min<int64_t>(3, n_tok)}) {
        for (int threads : {1, 2}) {
          const std::vector<float> want = product(file, x.data(), n_tok, per_token, threads);
          const std::vector<float> got = product(lanes, x.data(), n_tok, per_token, threads);
          for (size_t i = 0; i < got.size(); ++i) {
            ASSERT_NEAR(got[i], want[i], 1e-3f * (1.0f + std::fabs(want[i])))
                << gguf::tensor_type_traits(lt.type).name << " tokens " << n_tok << " at " << i;
          }
          for (int64_t t = 0; t < per_token; ++t) {
            const std::vector<float> alone = product(lanes, &x[t * cols], 1, 1, threads);
            for (int64_t r = 0; r < rows; ++r) {
              ASSERT_EQ(got[t * rows + r], alone[r]) << gguf::tensor_type_traits(lt.type).name << " tokens "
                                                     << n_tok << " token " << t << " row " << r;
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace afm
