// The RLOO objective (src/train/rloo.h):
// - leave-one-out advantages on a hand-worked example;
// - loss, advantages, KL and the gradient with respect to the log-probabilities equal an
//   independent NumPy computation on a fixed batch (tests/oracle/make_rloo_fixture.py);
// - with ratio 1 and beta 0 the gradient pushes up the log-probability of samples better than
//   their group and down that of worse ones; shapes that do not fit are errors;
// - next_token_logprobs equals log_softmax of the logits gathered at the next tokens.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "tiny_config.h"
#include "train/rloo.h"

namespace afm::train {
namespace {

torch::Tensor tensor_of(const nlohmann::json& j) {
  std::vector<double> flat;
  std::vector<int64_t> shape{static_cast<int64_t>(j.size())};
  if (j[0].is_array()) {
    shape.push_back(static_cast<int64_t>(j[0].size()));
    for (const auto& row : j) for (const auto& v : row) flat.push_back(v.get<double>());
  } else {
    for (const auto& v : j) flat.push_back(v.get<double>());
  }
  return torch::tensor(flat, torch::kFloat64).reshape(shape);
}

TEST(Rloo, LeaveOneOutOnAHandWorkedExample) {
  // Group 0: rewards 1, 0, 0.5 -> baselines 0.25, 0.75, 0.5; group 1 alone -> 0.
  const torch::Tensor a = leave_one_out_advantages(torch::tensor({1.0, 0.0, 0.5, 0.9}),
                                                   torch::tensor({0, 0, 0, 1}));
  const std::vector<double> want = {0.75, -0.75, 0.0, 0.0};
  for (int i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(a[i].item<double>(), want[i]) << i;
}

TEST(Rloo, MatchesTheNumpyReferenceOnAFixedBatch) {
  const char* root = std::getenv("AFM_SOURCE_DIR");
  std::ifstream in(std::string(root ? root : ".") + "/tests/data/rl/rloo_fixture.json");
  ASSERT_TRUE(in) << "fixture missing (tests/oracle/make_rloo_fixture.py)";
  const nlohmann::json f = nlohmann::json::parse(in);
  torch::Tensor lp = tensor_of(f["logprobs"]).to(torch::kFloat32).requires_grad_(true);
  const RlooTerms t = rloo_loss(lp, tensor_of(f["ref_logprobs"]), tensor_of(f["behaviour_logprobs"]),
                                tensor_of(f["mask"]), tensor_of(f["rewards"]),
                                tensor_of(f["groups"]).to(torch::kInt64),
                                {f["kl_beta"].get<double>(), f["max_ratio"].get<double>()});
  EXPECT_NEAR(t.loss.item<double>(), f["loss"].get<double>(), 1e-5);
  EXPECT_TRUE(torch::allclose(t.advantages, tensor_of(f["advantages"]), 1e-5, 1e-5));
  EXPECT_TRUE(torch::allclose(t.kl, tensor_of(f["kl"]), 1e-5, 1e-5));
  EXPECT_GT(t.truncated_share, 0.0) << "the fixture should exercise the truncation";
  t.loss.backward();
  EXPECT_TRUE(torch::allclose(lp.grad().to(torch::kFloat64), tensor_of(f["grad_logprobs"]),
                              1e-5, 1e-6));
}

TEST(Rloo, GradientFavoursSamplesBetterThanTheirGroup) {
  torch::Tensor lp = torch::full({3, 4}, -1.0).requires_grad_(true);
  const torch::Tensor same = lp.detach().clone(), mask = torch::ones({3, 4});
  rloo_loss(lp, same, same, mask, torch::tensor({1.0, 0.0, 0.0}), torch::tensor({7, 7, 7}),
            {0.0, 2.0})
      .loss.backward();
  // Gradient descent moves logp against the gradient: up for the rewarded sample.
  EXPECT_LT(lp.grad()[0][0].item<float>(), 0.0f);
  EXPECT_GT(lp.grad()[1][0].item<float>(), 0.0f);
}

TEST(Rloo, ShapesThatDoNotFitAreErrors) {
  const torch::Tensor lp = torch::zeros({2, 3});
  try {
    rloo_loss(lp, lp, torch::zeros({2, 4}), torch::ones({2, 3}), torch::zeros({2}),
              torch::zeros({2}, torch::kInt64), {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("behaviour_logprobs"), std::string::npos) << e.what();
  }
  EXPECT_THROW(rloo_loss(lp, lp, lp, torch::ones({2, 3}), torch::zeros({3}),
                         torch::zeros({2}, torch::kInt64), {}),
               Error);
}

TEST(Rloo, NextTokenLogprobsAreTheLogSoftmaxAtTheNextTokens) {
  auto model = make_language_model(testing::tiny_config("afm-device"), 3);
  const torch::Tensor tokens = torch::tensor({{5, 9, 2, 7, 7}, {1, 0, 3, 3, 8}}, torch::kInt64);
  torch::NoGradGuard no_grad;
  const torch::Tensor got = next_token_logprobs(*model, tokens);
  ASSERT_EQ(got.sizes(), (std::vector<int64_t>{2, 4}));
  const torch::Tensor logp = torch::log_softmax(model->forward(tokens), -1);
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t t = 0; t < 4; ++t) {
      EXPECT_FLOAT_EQ(got[b][t].item<float>(),
                      logp[b][t][tokens[b][t + 1].item<int64_t>()].item<float>());
    }
  }
}

}  // namespace
}  // namespace afm::train
