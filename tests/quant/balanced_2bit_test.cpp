// The balanced 2-bit reference codec (quant/balanced_2bit.h): the byte layout on a
// hand-computed block, the error bound of the levels, the kernels' dot-product identity, the
// clipping search, and degenerate blocks.
#include "quant/balanced_2bit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "base/half.h"

namespace afm::quant {
namespace {

std::vector<float> gaussian(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> x(n);
  for (float& v : x) v = normal(gen);
  return x;
}

// Element i is level (i % 4) of a block with max |x| = 3, so d = 2 and the levels are -3, -1,
// 1, 3: the codes are i % 4 and byte j holds elements j, j + 32, j + 64, j + 96.
TEST(Balanced2Bit, HandComputedBlockLayoutAndExactRoundTrip) {
  std::vector<float> x(kQ2BBlockElements);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 2.0f * (static_cast<float>(i % 4) - 1.5f);
  BlockQ2B b;
  quantize_row_q2b(x.data(), &b, x.size(), 1.0f);
  EXPECT_EQ(f16_to_f32(b.d), 2.0f);
  for (size_t j = 0; j < 32; ++j) {
    const uint8_t want = static_cast<uint8_t>((j % 4) | (j % 4) << 2 | (j % 4) << 4 | (j % 4) << 6);
    EXPECT_EQ(b.qs[j], want) << j;  // j, j + 32, j + 64 and j + 96 share i % 4
  }
  std::vector<float> y(x.size());
  dequantize_row_q2b(&b, y.data(), y.size());
  EXPECT_EQ(y, x);
}

TEST(Balanced2Bit, CodesAreTheNearestLevel) {
  EXPECT_EQ(q2b_code(-5.0f, 1.0f), 0);   // below -1: -1.5
  EXPECT_EQ(q2b_code(-1.0f, 1.0f), 1);   // [-1, 0): -0.5
  EXPECT_EQ(q2b_code(-0.01f, 1.0f), 1);
  EXPECT_EQ(q2b_code(0.0f, 1.0f), 2);    // [0, 1): 0.5
  EXPECT_EQ(q2b_code(0.99f, 1.0f), 2);
  EXPECT_EQ(q2b_code(1.0f, 1.0f), 3);    // from 1 up: 1.5
  EXPECT_EQ(q2b_code(NAN, 1.0f), 2);
  EXPECT_EQ(q2b_code(3.0f, 0.0f), 2);
}

// With f = 1 every value lies within [-1.5 d, 1.5 d] (up to the f16 rounding of d), so it is
// at most d / 2 from its level.
TEST(Balanced2Bit, ErrorIsAtMostHalfAStepWithoutClipping) {
  const std::vector<float> x = gaussian(64 * kQ2BBlockElements, 1);
  std::vector<BlockQ2B> b(x.size() / kQ2BBlockElements);
  quantize_row_q2b(x.data(), b.data(), x.size(), 1.0f);
  std::vector<float> y(x.size());
  dequantize_row_q2b(b.data(), y.data(), y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float d = f16_to_f32(b[i / kQ2BBlockElements].d);
    EXPECT_LE(std::fabs(x[i] - y[i]), 0.5f * d * 1.002f) << i;
  }
}

// sum_i x_i a_i over a block = d (sum_i q_i a_i - 1.5 sum_i a_i): the identity the kernels use.
TEST(Balanced2Bit, DotProductIdentity) {
  const std::vector<float> w = gaussian(8 * kQ2BBlockElements, 2);
  const std::vector<float> a = gaussian(w.size(), 3);
  std::vector<BlockQ2B> b(w.size() / kQ2BBlockElements);
  quantize_row_q2b_search(w.data(), b.data(), w.size());
  std::vector<float> decoded(w.size());
  dequantize_row_q2b(b.data(), decoded.data(), decoded.size());
  for (size_t blk = 0; blk < b.size(); ++blk) {
    double direct = 0, codes = 0, sum_a = 0;
    for (size_t j = 0; j < 32; ++j) {
      for (size_t plane = 0; plane < 4; ++plane) {
        const size_t i = blk * kQ2BBlockElements + plane * 32 + j;
        direct += double{decoded[i]} * a[i];
        codes += ((b[blk].qs[j] >> (2 * plane)) & 3) * double{a[i]};
        sum_a += a[i];
      }
    }
    const double via_codes = f16_to_f32(b[blk].d) * (codes - 1.5 * sum_a);
    EXPECT_NEAR(direct, via_codes, 1e-9) << blk;
  }
}

// The search tries f = 1 first, so it is never worse than no clipping; on Gaussian weights
// clipping the largest values buys resolution for the rest.
TEST(Balanced2Bit, ClippingSearchIsNeverWorseThanNoClipping) {
  const std::vector<float> x = gaussian(256 * kQ2BBlockElements, 4);
  std::vector<BlockQ2B> plain(x.size() / kQ2BBlockElements), searched(plain.size());
  quantize_row_q2b(x.data(), plain.data(), x.size(), 1.0f);
  quantize_row_q2b_search(x.data(), searched.data(), x.size());
  std::vector<float> y1(x.size()), y2(x.size());
  dequantize_row_q2b(plain.data(), y1.data(), y1.size());
  dequantize_row_q2b(searched.data(), y2.data(), y2.size());
  double e1 = 0, e2 = 0, energy = 0;
  for (size_t b = 0; b < plain.size(); ++b) {
    double b1 = 0, b2 = 0;
    for (size_t i = b * kQ2BBlockElements; i < (b + 1) * kQ2BBlockElements; ++i) {
      b1 += (x[i] - y1[i]) * (x[i] - y1[i]);
      b2 += (x[i] - y2[i]) * (x[i] - y2[i]);
      energy += x[i] * x[i];
    }
    EXPECT_LE(b2, b1 * (1 + 1e-6)) << b;
    e1 += b1, e2 += b2;
  }
  // Relative RMSE on N(0, 0.02^2): 0.55 without clipping, 0.34 with the search (most blocks
  // pick f = 0.5-0.65: the four levels then sit near the Gaussian's quartile centres).
  EXPECT_LT(std::sqrt(e2 / energy), 0.9 * std::sqrt(e1 / energy));
}

TEST(Balanced2Bit, ZeroBlockDecodesToZero) {
  const std::vector<float> x(kQ2BBlockElements, 0.0f);
  BlockQ2B b;
  quantize_row_q2b_search(x.data(), &b, x.size());
  std::vector<float> y(x.size(), 1.0f);
  dequantize_row_q2b(&b, y.data(), y.size());
  for (float v : y) EXPECT_EQ(v, 0.0f);
}

}  // namespace
}  // namespace afm::quant
