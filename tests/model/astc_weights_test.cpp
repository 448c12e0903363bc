// astc6x6 weights in the runtime: the fused matmul computes what the decoded matrix does, for
// any row split and batch; a file's tiles are checked at load, stacked expert matrices each
// tiled on their own.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include "backend/cpu/gemm_astc.h"
#include "base/error.h"
#include "base/thread_pool.h"
#include "gguf/reader.h"
#include "gguf/writer.h"
#include "model/weights.h"
#include "ops/matmul.h"
#include "quant/astc6x6.h"
#include "quant/astc_encoder.h"

namespace afm {
namespace {

namespace astc = quant::astc;

std::vector<float> gaussian(size_t n, uint32_t seed, float sigma = 0.05f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, sigma);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

std::vector<uint8_t> encode(const std::vector<float>& w, int64_t rows, int64_t cols) {
  std::vector<uint8_t> data(astc::tile_grid(rows, cols).bytes);
  astc::encode_matrix(w.data(), rows, cols, astc::EncodeOptions{}, data.data());
  return data;
}

// y = x · Wᵀ in double from the decoder's weights.
std::vector<float> reference(const std::vector<uint8_t>& data, int64_t rows, int64_t cols,
                             const std::vector<float>& x, int64_t n_tok) {
  std::vector<float> w(rows * cols);
  astc::decode_rows(data.data(), rows, cols, 0, rows, w.data());
  std::vector<float> y(n_tok * rows);
  for (int64_t t = 0; t < n_tok; ++t) {
    for (int64_t r = 0; r < rows; ++r) {
      double acc = 0;
      for (int64_t c = 0; c < cols; ++c) acc += double(w[r * cols + c]) * x[t * cols + c];
      y[t * rows + r] = static_cast<float>(acc);
    }
  }
  return y;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-4f * (1.0f + std::abs(want[i]))) << "element " << i;
  }
}

TEST(AstcMatmul, FusedKernelMatchesTheDecodedMatrix) {
  const int64_t rows = 50, cols = 70;  // neither a multiple of 6
  const std::vector<uint8_t> data = encode(gaussian(rows * cols, 1), rows, cols);
  for (int64_t n_tok : {1, 3, 9}) {
    const std::vector<float> x = gaussian(n_tok * cols, 2, 1.0f);
    const std::vector<float> want = reference(data, rows, cols, x, n_tok);
    for (int threads : {1, 2, 3}) {
      ThreadPool pool(threads);
      ops::ActivationScratch scratch;
      ops::Activations act(x.data(), n_tok, cols, scratch);
      const ops::Matrix m{gguf::TensorType::kASTC6X6, data.data(), rows, cols, 0};
      std::vector<float> y(n_tok * rows);
      ops::matmul(act, m, y.data(), pool);
      expect_close(y, want);
    }
    // A row range that starts and ends inside tiles writes exactly those rows.
    std::vector<float> part(n_tok * rows, -7.0f);
    cpu::astc6x6_gemm(data.data(), rows, cols, 8, 33, x.data(), n_tok, part.data(), rows);
    for (int64_t t = 0; t < n_tok; ++t) {
      for (int64_t r = 0; r < rows; ++r) {
        if (r < 8 || r >= 33) {
          ASSERT_EQ(part[t * rows + r], -7.0f);
        } else {
          ASSERT_NEAR(part[t * rows + r], want[t * rows + r], 1e-4f * (1 + std::abs(want[t * rows + r])));
        }
      }
    }
  }
}

class AstcLoad : public ::testing::Test {
 protected:
  std::string path_ = (std::filesystem::temp_directory_path() /
                       ("afm_astc_load_" + std::to_string(::getpid()) + ".gguf")).string();
  void TearDown() override { std::filesystem::remove(path_); }
};

TEST_F(AstcLoad, TilesAreCheckedAndExpertsTiledOnTheirOwn) {
  const int64_t rows = 20, cols = 33, experts = 3;
  std::vector<std::vector<uint8_t>> each;
  std::vector<uint8_t> stacked;
  for (int e = 0; e < experts; ++e) {
    each.push_back(encode(gaussian(rows * cols, 10 + e), rows, cols));
    stacked.insert(stacked.end(), each.back().begin(), each.back().end());
  }
  std::vector<uint8_t> bad = each[0];
  bad[6 * astc::kBlockBytes + 1] |= 0x08;  // tile (1, 0) (6 tiles a row) now claims two partitions
  gguf::Writer w;
  const std::vector<uint64_t> shape{uint64_t(cols), uint64_t(rows)};
  w.add_tensor("good", gguf::TensorType::kASTC6X6, shape, each[0]);
  w.add_tensor("bad", gguf::TensorType::kASTC6X6, shape, bad);
  w.add_tensor("experts", gguf::TensorType::kASTC6X6, {uint64_t(cols), uint64_t(rows), uint64_t(experts)},
               stacked);
  w.write(path_);

  const gguf::File file = gguf::File::open(path_);
  EXPECT_EQ(file.get_tensor("experts").n_bytes, stacked.size());
  const model::WeightLoader loader(file);
  EXPECT_NO_THROW(loader.matrix("good", rows, cols));
  try {
    loader.matrix("bad", rows, cols);
    FAIL() << "a block the decoder refuses was loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kFormat);
    EXPECT_NE(std::string(e.what()).find("bad: tile (1, 0)"), std::string::npos) << e.what();
  }
  const ops::Matrix all = loader.stacked_matrix("experts", experts, rows, cols);
  const std::vector<float> x = gaussian(cols, 3, 1.0f);
  ThreadPool pool(2);
  for (int e = 0; e < experts; ++e) {
    const ops::Matrix m = model::expert(all, e, rows);
    ops::ActivationScratch scratch;
    ops::Activations act(x.data(), 1, cols, scratch);
    std::vector<float> y(rows);
    ops::matmul(act, m, y.data(), pool);
    expect_close(y, reference(each[e], rows, cols, x, 1));
  }
}

}  // namespace
}  // namespace afm
