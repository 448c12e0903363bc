// Supervised fine-tuning: packed rows compute what their conversations compute alone, the loss
// reaches only assistant tokens, batches depend only on their coordinates.
#include <gtest/gtest.h>

#include "base/error.h"
#include "tiny_config.h"
#include "train/language_model.h"
#include "train/sft_data.h"
#include "train/training_loop.h"

namespace afm::train {
namespace {

using testing::tiny_config;

data::SftRecord example(int64_t n, int64_t seed) {
  data::SftRecord e;
  for (int64_t i = 0; i < n; ++i) {
    e.tokens.push_back(static_cast<int32_t>((seed * 31 + i * 7) % 96));
    e.trained.push_back(i >= n / 2 ? 1 : 0);  // the second half is the "assistant"
  }
  return e;
}

// Logits of one conversation alone: tokens[0 .. n-1) at positions 0 ...
torch::Tensor alone(LanguageModel& m, const data::SftRecord& e) {
  std::vector<int64_t> ids(e.tokens.begin(), e.tokens.end() - 1);
  return m.forward(torch::tensor(ids).unsqueeze(0)).squeeze(0);
}

class Packed : public ::testing::TestWithParam<std::string> {};

TEST_P(Packed, RowsComputeWhatTheirConversationsComputeAlone) {
  torch::NoGradGuard no_grad;
  auto m = make_language_model(tiny_config(GetParam()), 3);
  const data::SftRecord a = example(9, 1), b = example(13, 2), c = example(30, 3),
                        d = example(10, 4);
  // a and b take 8 + 12 of 24 positions; c (29) never fits and is left out; d opens row 2.
  const PackedRows rows = pack_examples({&a, &b, &c, &d}, 24);
  ASSERT_EQ(rows.input.size(0), 2);
  const torch::Tensor logits = m->forward(rows.input, {rows.segments, rows.positions});
  auto expect_near = [](const torch::Tensor& got, const torch::Tensor& want) {
    EXPECT_LT((got - want).abs().max().item<double>(), 1e-4);
  };
  expect_near(logits[0].slice(0, 0, 8), alone(*m, a));
  expect_near(logits[0].slice(0, 8, 20), alone(*m, b));
  expect_near(logits[1].slice(0, 0, 9), alone(*m, d));
  // Padding is segment -1 and never a target.
  EXPECT_EQ(rows.segments[0][20].item<int64_t>(), -1);
  EXPECT_EQ((rows.target[0].slice(0, 20, 24) == -100).all().item<bool>(), true);
  EXPECT_EQ(rows.positions[0][8].item<int64_t>(), 0);  // b starts at position 0
}

TEST_P(Packed, PackedLossEqualsTheLossOfEachConversationAlone) {
  torch::NoGradGuard no_grad;
  auto m = make_language_model(tiny_config(GetParam()), 5);
  const data::SftRecord a = example(9, 1), b = example(13, 2);
  const PackedRows rows = pack_examples({&a, &b}, 24);
  const double packed =
      language_model_loss(*m, {rows.input, rows.target, {rows.segments, rows.positions}})
          .item<double>();
  double sum = 0;
  int64_t count = 0;
  for (const data::SftRecord* e : {&a, &b}) {
    const torch::Tensor logp = torch::log_softmax(alone(*m, *e), -1);
    for (size_t j = 0; j + 1 < e->tokens.size(); ++j) {
      if (!e->trained[j + 1]) continue;
      sum -= logp[static_cast<int64_t>(j)][e->tokens[j + 1]].item<double>();
      ++count;
    }
  }
  EXPECT_NEAR(packed, sum / static_cast<double>(count), 1e-5);
}

TEST_P(Packed, NoGradientReachesTheLogitsOfUntrainedTokens) {
  auto m = make_language_model(tiny_config(GetParam()), 7);
  const data::SftRecord a = example(9, 1), b = example(13, 2);
  const PackedRows rows = pack_examples({&a, &b}, 24);
  torch::Tensor logits = m->forward(rows.input, {rows.segments, rows.positions});
  logits.retain_grad();
  torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}),
                                       rows.target.reshape({-1}))
      .backward();
  const torch::Tensor untrained = (rows.target == -100).unsqueeze(-1).expand_as(logits);
  EXPECT_EQ(logits.grad().masked_select(untrained).abs().max().item<double>(), 0.0);
  EXPECT_GT(logits.grad().masked_select(untrained.logical_not()).abs().max().item<double>(), 0.0);
}

INSTANTIATE_TEST_SUITE_P(Archs, Packed, ::testing::Values("llama", "afm-device", "afm-server"));

TEST(SftBatchesTest, BatchesDependOnlyOnTheirCoordinates) {
  SftData d;
  for (int i = 0; i < 40; ++i) d.train.records.push_back(example(5 + i % 7, i));
  for (int i = 0; i < 6; ++i) d.val.records.push_back(example(8, 100 + i));
  const SftBatches a(d, 4, 24, 9, 8), b(d, 4, 24, 9, 8);
  EXPECT_TRUE(torch::equal(a.train(3, 1).input, b.train(3, 1).input));
  EXPECT_FALSE(torch::equal(a.train(3, 1).input, a.train(4, 1).input));
  EXPECT_EQ(a.eval_count(), 1);  // 6 x 7 positions: 2 rows of 24, one batch
  EXPECT_EQ(a.eval(0).input.size(0), 2);
}

}  // namespace
}  // namespace afm::train
