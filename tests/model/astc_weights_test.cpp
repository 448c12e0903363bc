// astc6x6 weights in the runtime: the fused matmul computes what the decoded matrix does, for
// any row split and batch, from the file's blocks and from the lane form made at load; the
// AVX2 lane kernels equal the portable ones; a file's tiles are checked at load, stacked expert
// matrices each tiled on their own.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include "backend/cpu/gemm_astc.h"
#include "backend/cpu/gemm_astc_lanes.h"
#include "base/cpu_features.h"
#include "base/error.h"
#include "base/half.h"
#include "base/thread_pool.h"
#include "gguf/reader.h"
#include "gguf/writer.h"
#include "model/weights.h"
#include "ops/interleaved_weights.h"
#include "ops/matmul.h"
#include "quant/astc6x6.h"
#include "quant/astc_encoder.h"
#include "quant/astc_lanes.h"

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

// A Gaussian matrix with one constant tile, so that its lane form has an exception.
std::vector<float> gaussian_with_constant_tile(int64_t rows, int64_t cols, uint32_t seed) {
  std::vector<float> w = gaussian(rows * cols, seed);
  for (int64_t r = 6; r < 12; ++r) std::fill(w.begin() + r * cols + 6, w.begin() + r * cols + 12, 0.125f);
  return w;
}

// The lane form of one encoded matrix, region then exception records.
std::vector<uint8_t> lane_form(const std::vector<uint8_t>& data, int64_t rows, int64_t cols) {
  const astc::LaneForms forms = astc::make_lane_forms(data.data(), 1, rows, cols);
  EXPECT_GT(forms.records.size(), 0u);
  std::vector<uint8_t> form(forms.bytes());
  forms.place(form.data());
  return form;
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

// The most the integer path's input quantisation (gemm_astc_lanes.h) can move output r of
// token t: each input rounded to a multiple of its group's scale, so by at most half of it,
// times the tile's decoded value before its offset is added (the offsets' term takes exact
// sums of the input).
std::vector<float> quantisation_bounds(const std::vector<uint8_t>& data, int64_t rows, int64_t cols,
                                       const std::vector<float>& x, int64_t n_tok) {
  std::vector<float> w(rows * cols);
  astc::decode_rows(data.data(), rows, cols, 0, rows, w.data());
  const astc::TileGrid grid = astc::tile_grid(rows, cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      uint16_t offset;
      std::memcpy(&offset, data.data() + grid.offsets_at + ((r / 6) * grid.tile_cols + c / 6) * 2, 2);
      w[r * cols + c] -= f16_to_f32(offset);
    }
  }
  const int64_t group = int64_t{cpu::kGroupTiles} * astc::kTile;
  std::vector<float> bound(n_tok * rows, 0.0f);
  for (int64_t t = 0; t < n_tok; ++t) {
    std::vector<float> half_step(cols);
    for (int64_t g = 0; g < cols; g += group) {
      float largest = 0;
      for (int64_t c = g; c < std::min(cols, g + group); ++c) largest = std::max(largest, std::abs(x[t * cols + c]));
      for (int64_t c = g; c < std::min(cols, g + group); ++c) half_step[c] = 0.5f * largest / cpu::kQMax;
    }
    for (int64_t r = 0; r < rows; ++r) {
      double b = 0;
      for (int64_t c = 0; c < cols; ++c) b += std::abs(double(w[r * cols + c])) * half_step[c];
      bound[t * rows + r] = static_cast<float>(b);
    }
  }
  return bound;
}

// got within float rounding of want, plus `extra` (a quantisation bound) where given.
void expect_close(const std::vector<float>& got, const std::vector<float>& want,
                  const std::vector<float>& extra = {}) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const float slack = extra.empty() ? 0.0f : extra[i];
    ASSERT_NEAR(got[i], want[i], 1e-4f * (1.0f + std::abs(want[i])) + slack) << "element " << i;
  }
}

// matmul at 1-3 threads, and the kernel on a row range that starts and ends inside tiles
// (writing exactly those rows), against the decoded matrix; from the lane form `lanes`, or the
// file's blocks when it is null.
void expect_matches_decoded(const std::vector<uint8_t>& data, const uint8_t* lanes, int64_t rows,
                            int64_t cols, uint32_t seed) {
  for (int64_t n_tok : {1, 3, 9}) {
    const std::vector<float> x = gaussian(n_tok * cols, seed, 1.0f);
    const std::vector<float> want = reference(data, rows, cols, x, n_tok);
    // One token from the lane form takes the integer path where the CPU has it.
    const std::vector<float> extra = lanes != nullptr && n_tok == 1 && cpu::astc6x6_quantises_one_token()
                                         ? quantisation_bounds(data, rows, cols, x, n_tok)
                                         : std::vector<float>{};
    for (int threads : {1, 2, 3}) {
      ThreadPool pool(threads);
      ops::ActivationScratch scratch;
      ops::Activations act(x.data(), n_tok, cols, scratch);
      ops::Matrix m{gguf::TensorType::kASTC6X6, data.data(), rows, cols, 0};
      m.interleaved = lanes;
      std::vector<float> y(n_tok * rows);
      ops::matmul(act, m, y.data(), pool);
      expect_close(y, want, extra);
    }
    std::vector<float> part(n_tok * rows, -7.0f);
    if (lanes == nullptr) {
      cpu::astc6x6_gemm(data.data(), rows, cols, 8, 33, x.data(), n_tok, part.data(), rows);
    } else {
      cpu::astc6x6_lanes_gemm(lanes, rows, cols, 8, 33, x.data(), n_tok, part.data(), rows);
    }
    for (int64_t t = 0; t < n_tok; ++t) {
      for (int64_t r = 0; r < rows; ++r) {
        const float v = part[t * rows + r], w = want[t * rows + r];
        if (r < 8 || r >= 33) {
          ASSERT_EQ(v, -7.0f);
        } else {
          ASSERT_NEAR(v, w, 1e-4f * (1 + std::abs(w)) + (extra.empty() ? 0.0f : extra[t * rows + r]));
        }
      }
    }
  }
}

TEST(AstcMatmul, FusedKernelMatchesTheDecodedMatrix) {
  const int64_t rows = 50, cols = 70;  // neither a multiple of 6
  expect_matches_decoded(encode(gaussian(rows * cols, 1), rows, cols), nullptr, rows, cols, 2);
}

TEST(AstcMatmul, LaneFormMatchesTheDecodedMatrix) {
  const int64_t rows = 50, cols = 70;
  const std::vector<uint8_t> data = encode(gaussian_with_constant_tile(rows, cols, 4), rows, cols);
  expect_matches_decoded(data, lane_form(data, rows, cols).data(), rows, cols, 5);
}

// A SIMD set against the portable one: decode bit for bit (padding lanes included), the sums
// to float rounding. 200 columns are 34 tile columns (the AVX-512 row kernel's pairs); 194 are
// 33, which leaves it a last block of its own.
void expect_lane_kernels_match_portable(const cpu::AstcLaneKernels* simd, int64_t cols) {
  const cpu::AstcLaneKernels& ref = cpu::astc_lane_kernels_scalar();
  const int64_t rows = 36;
  const std::vector<uint8_t> data = encode(gaussian_with_constant_tile(rows, cols, 6), rows, cols);
  const std::vector<uint8_t> form = lane_form(data, rows, cols);
  const astc::LaneView v = astc::lane_view(form.data(), rows, cols);
  for (int64_t t = 0; t < v.tile_rows * v.tile_cols; ++t) {
    float a[astc::kLanes], b[astc::kLanes];
    ref.decode(v.blocks[t], a);
    simd->decode(v.blocks[t], b);
    for (int l = 0; l < astc::kLanes; ++l) ASSERT_EQ(a[l], b[l]) << "tile " << t << " lane " << l;
  }
  const std::vector<float> xpat = gaussian(v.tile_cols * cpu::kXpatFloats, 7, 1.0f);
  const std::vector<float> sums = gaussian(v.tile_cols, 8, 1.0f);
  for (int64_t tr = 0; tr < v.tile_rows; ++tr) {
    float a[astc::kTile], b[astc::kTile];
    ref.row(v.blocks + tr * v.tile_cols, v.offsets + tr * v.tile_cols, sums.data(), v.tile_cols,
            xpat.data(), a);
    simd->row(v.blocks + tr * v.tile_cols, v.offsets + tr * v.tile_cols, sums.data(), v.tile_cols,
              xpat.data(), b);
    for (auto* e = v.exceptions_begin(tr); e != v.exceptions_end(tr); ++e) {
      ref.exception(*e, xpat.data() + e->tile_col * cpu::kXpatFloats, a);
      simd->exception(*e, xpat.data() + e->tile_col * cpu::kXpatFloats, b);
    }
    for (int y = 0; y < astc::kTile; ++y) ASSERT_NEAR(a[y], b[y], 1e-4f * (1 + std::abs(a[y]))) << "row " << y;
  }
  const std::vector<float> tile = gaussian(astc::kTexels, 9);
  for (int64_t n_tok : {1, 7, 8, 19}) {
    const std::vector<float> x = gaussian(6 * n_tok, 10, 1.0f), s = gaussian(n_tok, 11, 1.0f);
    std::vector<float> a = gaussian(6 * n_tok, 12), b = a;
    ref.tile_product(tile.data(), 0.3f, x.data(), s.data(), n_tok, a.data());
    simd->tile_product(tile.data(), 0.3f, x.data(), s.data(), n_tok, b.data());
    for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-5f * (1 + std::abs(a[i]))) << n_tok;
  }
}

TEST(AstcLaneKernels, Avx2MatchesPortable) {
  const cpu::AstcLaneKernels* simd = cpu::astc_lane_kernels_avx2();
  if (simd == nullptr || !cpu_features().avx2) GTEST_SKIP() << "no AVX2 here";
  expect_lane_kernels_match_portable(simd, 200);
  expect_lane_kernels_match_portable(simd, 194);
}

TEST(AstcLaneKernels, Avx512MatchesPortable) {
  const cpu::AstcLaneKernels* simd = cpu::astc_lane_kernels_avx512();
  if (simd == nullptr || !cpu_features().avx512) GTEST_SKIP() << "no AVX-512 here";
  expect_lane_kernels_match_portable(simd, 200);
  expect_lane_kernels_match_portable(simd, 194);
}

// The integer row path against its reference (scalar_row_q: 64-bit sums texel by texel) on the
// same quantised input, to float rounding: 34 tile columns are three groups, the last of two
// blocks; 33 leave one block in the last step; 14 are one group.
TEST(AstcLaneKernels, IntegerRowMatchesItsReference) {
  const cpu::AstcLaneKernels* simd = cpu::astc_lane_kernels_avx512_vnni();
  if (simd == nullptr || !cpu_features().avx512 || !cpu_features().avx512_vnni) {
    GTEST_SKIP() << "no AVX-512 VNNI here";
  }
  const cpu::AstcLaneKernels& ref = cpu::astc_lane_kernels_scalar();
  for (int64_t cols : {200, 194, 84}) {
    const int64_t rows = 36;
    const std::vector<uint8_t> data = encode(gaussian_with_constant_tile(rows, cols, 6), rows, cols);
    const std::vector<uint8_t> form = lane_form(data, rows, cols);
    const astc::LaneView v = astc::lane_view(form.data(), rows, cols);
    const int64_t groups = (v.tile_cols + cpu::kGroupTiles - 1) / cpu::kGroupTiles;
    std::mt19937 rng(static_cast<uint32_t>(cols));
    std::uniform_int_distribution<int> q(-cpu::kQMax, cpu::kQMax);
    std::vector<int16_t> qpat(groups * cpu::kGroupTiles * cpu::kQpatLanes, 0);
    for (int64_t tc = 0; tc < v.tile_cols; ++tc) {
      for (int j = 0; j < 12; ++j) qpat[tc * cpu::kQpatLanes + j] = static_cast<int16_t>(q(rng));
    }
    // The extremes too: every input at the bound in the first group.
    for (int j = 0; j < 12; ++j) qpat[j] = cpu::kQMax;
    const std::vector<float> scales = gaussian(groups, 13, 0.01f), sums = gaussian(v.tile_cols, 8, 1.0f);
    for (int64_t tr = 0; tr < v.tile_rows; ++tr) {
      float a[astc::kTile], b[astc::kTile];
      ref.row_q(v.blocks + tr * v.tile_cols, v.offsets + tr * v.tile_cols, sums.data(), v.tile_cols,
                v.exponents[tr], qpat.data(), scales.data(), a);
      simd->row_q(v.blocks + tr * v.tile_cols, v.offsets + tr * v.tile_cols, sums.data(), v.tile_cols,
                  v.exponents[tr], qpat.data(), scales.data(), b);
      for (int y = 0; y < astc::kTile; ++y) {
        ASSERT_NEAR(a[y], b[y], 1e-5f * (1 + std::abs(a[y]))) << cols << " columns, tile row " << tr << " row " << y;
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
    each.push_back(encode(gaussian_with_constant_tile(rows, cols, 10 + e), rows, cols));
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
  // Without and with the lane forms made at load (each expert its own region).
  ops::InterleavedWeights store;
  const model::WeightLoader with_lanes(file, &store);
  for (const model::WeightLoader* l : {&loader, &with_lanes}) {
    const ops::Matrix all = l->stacked_matrix("experts", experts, rows, cols);
    EXPECT_EQ(all.interleaved != nullptr, l == &with_lanes);
    ThreadPool pool(2);
    for (int64_t n_tok : {1, 4}) {
      const std::vector<float> x = gaussian(n_tok * cols, 3, 1.0f);
      for (int e = 0; e < experts; ++e) {
        const ops::Matrix m = model::expert(all, e, rows);
        ops::ActivationScratch scratch;
        ops::Activations act(x.data(), n_tok, cols, scratch);
        std::vector<float> y(n_tok * rows);
        ops::matmul(act, m, y.data(), pool);
        expect_close(y, reference(each[e], rows, cols, x, n_tok));
      }
    }
  }
  EXPECT_GT(store.bytes(), 0u);
}

}  // namespace
}  // namespace afm
