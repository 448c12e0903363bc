#include "quant/block_formats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "base/half.h"

namespace afm::quant {
namespace {

std::vector<float> random_row(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(n);
  for (float& v : x) v = dist(rng);
  return x;
}

TEST(Q8_0, KnownBlock) {
  std::vector<float> x(32, 0.0f);
  x[0] = 127.0f;
  x[1] = -63.5f;  // ties round away from zero, as ggml's roundf
  x[2] = 1.0f;
  BlockQ8_0 b;
  quantize_row_q8_0(x.data(), &b, 32);
  EXPECT_EQ(b.d, f32_to_f16(1.0f));
  EXPECT_EQ(b.q[0], 127);
  EXPECT_EQ(b.q[1], -64);
  EXPECT_EQ(b.q[2], 1);
  EXPECT_EQ(b.q[3], 0);
}

TEST(Q4_0, KnownBlock) {
  std::vector<float> x(32, 0.0f);
  x[0] = -8.0f;  // largest magnitude, negative: d = 1
  x[16] = 7.0f;
  x[1] = 3.2f;
  BlockQ4_0 b;
  quantize_row_q4_0(x.data(), &b, 32);
  EXPECT_EQ(b.d, f32_to_f16(1.0f));
  EXPECT_EQ(b.qs[0] & 0x0f, 0);      // -8 + 8
  EXPECT_EQ(b.qs[0] >> 4, 15);       // 7 + 8
  EXPECT_EQ(b.qs[1] & 0x0f, 11);     // trunc(3.2 + 8.5)
  EXPECT_EQ(b.qs[2], 8 | (8 << 4));  // zeros
}

TEST(Q8_0, RoundTripErrorIsBoundedByHalfAStep) {
  std::vector<float> x = random_row(32 * 64, 1);
  std::vector<BlockQ8_0> q(64);
  std::vector<float> y(x.size());
  quantize_row_q8_0(x.data(), q.data(), x.size());
  dequantize_row_q8_0(q.data(), y.data(), y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    float d = f16_to_f32(q[i / 32].d);
    EXPECT_LE(std::fabs(x[i] - y[i]), 0.5f * d + 1e-3f * std::fabs(x[i])) << i;
  }
}

TEST(Q4_0, RoundTripErrorIsBoundedByOneStep) {
  std::vector<float> x = random_row(32 * 64, 2);
  std::vector<BlockQ4_0> q(64);
  std::vector<float> y(x.size());
  quantize_row_q4_0(x.data(), q.data(), x.size());
  dequantize_row_q4_0(q.data(), y.data(), y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    float d = std::fabs(f16_to_f32(q[i / 32].d));
    EXPECT_LE(std::fabs(x[i] - y[i]), d + 1e-3f * std::fabs(x[i])) << i;
  }
}

TEST(Quant, ZeroBlocksStayZero) {
  std::vector<float> x(32, 0.0f), y(32, 1.0f);
  BlockQ8_0 q8;
  quantize_row_q8_0(x.data(), &q8, 32);
  dequantize_row_q8_0(&q8, y.data(), 32);
  for (float v : y) EXPECT_EQ(v, 0.0f);
  BlockQ4_0 q4;
  quantize_row_q4_0(x.data(), &q4, 32);
  dequantize_row_q4_0(&q4, y.data(), 32);
  for (float v : y) EXPECT_EQ(v, 0.0f);
}

}  // namespace
}  // namespace afm::quant
