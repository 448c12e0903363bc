#include "sample/logprobs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace afm::sample {
namespace {

// logits {1, 2, 3}: log Z = 3 + ln(1 + e^-1 + e^-2) = 3.4076059644 (by hand).
TEST(Logprobs, LogSoftmaxOfTheRawLogitsAtTheChosenToken) {
  const std::vector<float> logits = {1.0f, 2.0f, 3.0f};
  const SampledLogprobs l = logprobs_at(logits, 1, 0);
  EXPECT_EQ(l.chosen.token, 1);
  EXPECT_NEAR(l.chosen.logprob, 2.0 - 3.4076059644, 1e-6);
  EXPECT_TRUE(l.top.empty());
}

TEST(Logprobs, TopAlternativesHighestFirstTiesByLowerId) {
  const std::vector<float> logits = {0.5f, 2.0f, 2.0f, -1.0f};
  const SampledLogprobs l = logprobs_at(logits, 3, 3);
  ASSERT_EQ(l.top.size(), 3u);
  EXPECT_EQ(l.top[0].token, 1);
  EXPECT_EQ(l.top[1].token, 2);
  EXPECT_EQ(l.top[2].token, 0);
  EXPECT_FLOAT_EQ(l.top[0].logprob, l.top[1].logprob);
  double total = 0;
  for (size_t i = 0; i < logits.size(); ++i)
    total += std::exp(logprobs_at(logits, static_cast<int32_t>(i), 0).chosen.logprob);
  EXPECT_NEAR(total, 1.0, 1e-6);
  EXPECT_EQ(logprobs_at(logits, 0, 10).top.size(), logits.size());  // capped at the vocabulary
}

TEST(Logprobs, MinusInfinityStaysMinusInfinityAndLargeLogitsDoNotOverflow) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> logits = {1000.0f, -inf, 999.0f};
  const SampledLogprobs l = logprobs_at(logits, 1, 1);
  EXPECT_EQ(l.chosen.logprob, -inf);
  EXPECT_NEAR(logprobs_at(logits, 0, 0).chosen.logprob, -std::log1p(std::exp(-1.0)), 1e-5);
  EXPECT_EQ(l.top[0].token, 0);
}

}  // namespace
}  // namespace afm::sample
