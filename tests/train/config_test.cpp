// Model and training configuration files, and the learning-rate schedule.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "train/lr_schedule.h"
#include "train/model_config.h"

namespace afm::train {
namespace {

std::string error_of(const nlohmann::json& j) {
  try {
    ModelConfig::from_json(j);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ModelConfig, RoundTripsThroughJsonAndNamesBadFields) {
  nlohmann::json j = {{"arch", "afm-server"}, {"vocab_size", 100}, {"embedding_length", 64},
                      {"block_count", 8}, {"head_count", 4}, {"head_count_kv", 2},
                      {"tracks", 2}, {"track_block_depth", 4}, {"expert_count", 8},
                      {"expert_used_count", 2}, {"expert_feed_forward_length", 32}};
  const ModelConfig c = ModelConfig::from_json(j);
  EXPECT_EQ(ModelConfig::from_json(c.to_json()).to_json(), c.to_json());
  EXPECT_TRUE(c.is_global_layer(3));
  EXPECT_FALSE(c.is_global_layer(2));
  EXPECT_TRUE(c.is_moe_layer(1));
  EXPECT_FALSE(c.is_moe_layer(0));

  auto with = [&](const char* key, nlohmann::json v) {
    nlohmann::json k = j;
    k[key] = v;
    return error_of(k);
  };
  EXPECT_NE(with("head_count_kv", 3).find("/head_count_kv"), std::string::npos);
  EXPECT_NE(with("track_block_depth", 3).find("/track_block_depth"), std::string::npos);
  EXPECT_NE(with("expert_used_count", 9).find("/expert_used_count"), std::string::npos);
  EXPECT_NE(with("arch", "gpt5").find("/arch"), std::string::npos);
  EXPECT_NE(with("vocab_size", "many").find("must be an integer"), std::string::npos);
  EXPECT_NE(with("colour", 1).find("unknown field"), std::string::npos);
}

TEST(ModelConfig, DeviceSplitDefaultsToTheReportsFiveEighths) {
  ModelConfig c;
  c.block_count = 16;
  EXPECT_EQ(c.effective_block1_layers(), 10);
  c.block1_layers = 3;
  EXPECT_EQ(c.effective_block1_layers(), 3);
}

TEST(ModelConfig, ParameterCountMatchesAHandCount) {
  ModelConfig c;
  c.arch = "llama";
  c.vocab_size = 10, c.embedding_length = 4, c.block_count = 1, c.feed_forward_length = 6;
  c.head_count = 2, c.head_count_kv = 1;  // head_dim 2, kv width 2
  // embedding 40 + output_norm 4 + norms 8 + q 16 + k 8 + v 8 + o 16 + ffn 72
  EXPECT_EQ(c.parameter_count(), 40 + 4 + 8 + 16 + 8 + 8 + 16 + 72);
}

TEST(LearningRate, WarmsUpLinearlyThenFollowsACosineToTheFloor) {
  EXPECT_DOUBLE_EQ(learning_rate_at(0, 1.0, 0.1, 10, 110), 0.1);
  EXPECT_DOUBLE_EQ(learning_rate_at(9, 1.0, 0.1, 10, 110), 1.0);
  EXPECT_DOUBLE_EQ(learning_rate_at(10, 1.0, 0.1, 10, 110), 1.0);
  EXPECT_NEAR(learning_rate_at(60, 1.0, 0.1, 10, 110), 0.55, 1e-12);
  EXPECT_NEAR(learning_rate_at(110, 1.0, 0.1, 10, 110), 0.1, 1e-12);
  EXPECT_NEAR(learning_rate_at(500, 1.0, 0.1, 10, 110), 0.1, 1e-12);
}

}  // namespace
}  // namespace afm::train
