// Whole-sequence scores (train/sequence_scores.h): the first-fit-decreasing placement, and each
// packed sequence's last-token logit equal to that sequence's alone, for every architecture
// (afm-server's sliding window is shorter than the sequences, so a window that crossed into a
// neighbour would show).
#include "train/sequence_scores.h"

#include <gtest/gtest.h>

#include <random>

#include "tiny_config.h"

namespace afm::train {
namespace {

using testing::tiny_config;

TEST(PackSequences, LongestFirstIntoTheFirstRowWithRoom) {
  // Longest first into rows 9 wide: 9 fills row 0; 7 opens row 1; 4 opens row 2 (7 + 4 > 9);
  // 3 joins row 2 (after 4); 2 joins row 1 (7 + 2 = 9); 1 joins row 2 (4 + 3 + 1).
  const SequencePacking p = pack_sequences({4, 9, 2, 7, 3, 1});
  EXPECT_EQ(p.width, 9);
  EXPECT_EQ(p.rows, 3);
  EXPECT_EQ(p.row, (std::vector<int64_t>{2, 0, 1, 1, 2, 2}));
  EXPECT_EQ(p.start, (std::vector<int64_t>{0, 0, 7, 0, 4, 7}));
  const SequencePacking empty = pack_sequences({});
  EXPECT_EQ(empty.rows, 0);
}

class LastTokenLogits : public ::testing::TestWithParam<std::string> {};

TEST_P(LastTokenLogits, EachPackedSequenceScoresAsItDoesAlone) {
  torch::NoGradGuard no_grad;
  auto m = make_language_model(tiny_config(GetParam()), 11);
  std::mt19937 rng(5);
  std::vector<std::vector<int32_t>> seqs;
  for (int n : {12, 3, 7, 12, 1, 5, 9}) {
    std::vector<int32_t> s(n);
    for (int32_t& t : s) t = static_cast<int32_t>(rng() % 96);
    seqs.push_back(std::move(s));
  }
  std::vector<const std::vector<int32_t>*> ptrs;
  for (const auto& s : seqs) ptrs.push_back(&s);
  constexpr int32_t kScoreToken = 17;
  const torch::Tensor packed = last_token_logits(*m, ptrs, kScoreToken);
  ASSERT_EQ(packed.size(0), static_cast<int64_t>(seqs.size()));
  for (size_t i = 0; i < seqs.size(); ++i) {
    torch::Tensor tokens = torch::empty({1, static_cast<int64_t>(seqs[i].size())}, torch::kInt64);
    for (size_t j = 0; j < seqs[i].size(); ++j) tokens[0][j] = seqs[i][j];
    const double alone = m->forward(tokens)[0][-1][kScoreToken].item<double>();
    EXPECT_NEAR(packed[i].item<double>(), alone, 1e-4) << "sequence " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, LastTokenLogits,
                         ::testing::Values("llama", "afm-device", "afm-server"));

}  // namespace
}  // namespace afm::train
