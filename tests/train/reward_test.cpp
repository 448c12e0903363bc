// The reward model: its loss on a hand-worked batch, and the runtime's score (rl::RewardModel,
// one forward pass of afm's engine) equal to the training model's for the same conversation.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "base/error.h"
#include "framework/loaded_model.h"
#include "framework/training_example.h"
#include "rl/reward_model.h"
#include "train/gguf_export.h"
#include "train/gguf_import.h"
#include "train/reward_loss.h"

namespace afm::train {
namespace {

namespace fs = std::filesystem;

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

TEST(RewardLoss, MatchesAHandWorkedBatch) {
  const torch::Tensor chosen = torch::tensor({2.0, 0.5}, torch::kFloat64);
  const torch::Tensor rejected = torch::tensor({1.0, 1.5}, torch::kFloat64);
  const double nan = std::nan("");
  // Pair 0: both graded (1, 0.25); pair 1: only the rejected reply (0.5).
  const torch::Tensor grades = torch::tensor({1.0, 0.25, nan, 0.5}, torch::kFloat64).view({2, 2});
  const RewardLossTerms t = reward_loss(chosen, rejected, grades, 0.5);
  const double pairwise = (-std::log(sigmoid(1.0)) - std::log(sigmoid(-1.0))) / 2;
  const auto bce = [](double s, double g) {
    return -(g * std::log(sigmoid(s)) + (1 - g) * std::log(1 - sigmoid(s)));
  };
  const double graded = (bce(2.0, 1.0) + bce(1.0, 0.25) + bce(1.5, 0.5)) / 3;
  EXPECT_NEAR(t.pairwise, pairwise, 1e-12);
  EXPECT_NEAR(t.graded, graded, 1e-12);
  EXPECT_NEAR(t.loss.item<double>(), pairwise + 0.5 * graded, 1e-12);
  EXPECT_DOUBLE_EQ(t.accuracy, 0.5);
  EXPECT_DOUBLE_EQ(t.margin, 0.0);

  // Without grades the regularizer is 0; the gradient pushes chosen up, rejected down.
  const torch::Tensor c = torch::tensor({0.0}, torch::requires_grad());
  const torch::Tensor r = torch::tensor({0.0}, torch::requires_grad());
  const RewardLossTerms u = reward_loss(c, r, torch::full({1, 2}, nan), 1.0);
  EXPECT_DOUBLE_EQ(u.graded, 0.0);
  u.loss.backward();
  EXPECT_LT(c.grad().item<double>(), 0);
  EXPECT_GT(r.grad().item<double>(), 0);
  EXPECT_THROW(reward_loss(c, r, torch::zeros({2, 2}), 1.0), Error);
}

TEST(RewardModel, RuntimeScoreEqualsTheTrainingModels) {
  const std::string base =
      std::string(std::getenv("AFM_SOURCE_DIR")) + "/models/afm-device-21m.gguf";
  const fs::path dir = fs::temp_directory_path() / ("afm_reward_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "rm.gguf").string();
  std::shared_ptr<LanguageModel> model = import_gguf_model(base).model;
  ExportOptions e{gguf::TensorType::kF32, base, "rm"};
  e.extra_u32.emplace_back(rl::kRewardScoreTokenKey, 7);
  export_gguf(*model, e, path);

  ChatRequest prompt;
  prompt.messages.emplace_back("user", "Hi! How are you today?");
  const ChatMessage reply("assistant", "I am well, thank you. How can I help?");
  const rl::RewardModel rm(path, 2);
  EXPECT_EQ(rm.score_token(), 7);

  const auto runtime = LoadedModel::load(path);
  ChatRequest conversation = prompt;
  conversation.messages.push_back(reply);
  const TrainingExample ex =
      render_training_example(*runtime->chat_template(), runtime->tokenizer(), conversation);
  torch::Tensor tokens = torch::empty({1, static_cast<int64_t>(ex.tokens.size())}, torch::kInt64);
  for (size_t i = 0; i < ex.tokens.size(); ++i) tokens[0][i] = ex.tokens[i];
  torch::NoGradGuard no_grad;
  const double expected = model->forward(tokens)[0][-1][7].item<double>();
  EXPECT_NEAR(rm.score(prompt, reply), expected, 1e-3);
  EXPECT_NEAR(rm.reward(prompt, reply), sigmoid(expected), 1e-4);
  // A different reply scores differently (the score reads the whole conversation).
  EXPECT_NE(rm.score(prompt, ChatMessage("assistant", "The answer is 12.")),
            rm.score(prompt, reply));
  // A plain model is not a reward model.
  EXPECT_THROW(rl::RewardModel(base, 1), Error);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace afm::train
