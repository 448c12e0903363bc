// Block expansion (block_expansion.h): the grown model computes its base's function, its layers
// and Block 1 are where the plan says, and the new layers are live layers that training moves.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.h"
#include "tiny_config.h"
#include "train/block_expansion.h"

namespace afm::train {
namespace {

torch::Tensor parameter(const LanguageModel& model, const std::string& name) {
  for (const NamedParameter& p : model.gguf_parameters()) {
    if (p.gguf_name == name) return p.tensor;
  }
  ADD_FAILURE() << "no parameter " << name;
  return {};
}

TEST(BlockExpansion, PlanPutsEachCopyBeforeItsLayer) {
  // tiny afm-device: 4 layers, Block 1 = layers 0-2 (layer 3 reuses layer 2's K/V).
  const ExpansionPlan plan = plan_block_expansion(testing::tiny_config("afm-device"), {3, 0, 2});
  EXPECT_EQ(plan.config.block_count, 7);
  EXPECT_EQ(plan.source_layer, (std::vector<int64_t>{0, 0, 1, 2, 2, 3, 3}));
  EXPECT_EQ(plan.identity_copy, (std::vector<bool>{true, false, false, true, false, true, false}));
  // Layer 2's copy joins Block 1 before it; layer 3's copy is the first Block-2 layer.
  EXPECT_EQ(plan.config.block1_layers, 5);
}

TEST(BlockExpansion, RefusesWhatItCannotGrow) {
  const ModelConfig device = testing::tiny_config("afm-device");
  EXPECT_THROW(plan_block_expansion(device, {}), Error);
  EXPECT_THROW(plan_block_expansion(device, {4}), Error);
  EXPECT_THROW(plan_block_expansion(device, {1, 1}), Error);
  EXPECT_THROW(plan_block_expansion(device, {-1}), Error);
  try {
    plan_block_expansion(testing::tiny_config("afm-server"), {0});
    ADD_FAILURE() << "afm-server was expanded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
  }
}

class Expansion : public ::testing::TestWithParam<std::string> {};

TEST_P(Expansion, GrownModelComputesTheBaseFunction) {
  torch::manual_seed(11);
  const std::shared_ptr<LanguageModel> base = make_language_model(testing::tiny_config(GetParam()), 7);
  // Layer 2 is afm-device's last Block-1 layer: a copy behind it instead of in front would
  // change the K/V that layer 3 reads.
  const std::shared_ptr<LanguageModel> grown = expand_blocks(*base, {0, 1, 2, 3});
  EXPECT_EQ(grown->config().block_count, 8);
  if (GetParam() == "afm-device") EXPECT_EQ(grown->config().block1_layers, 6);
  const torch::Tensor tokens = torch::randint(base->config().vocab_size, {2, 11});
  {
    torch::NoGradGuard no_grad;
    EXPECT_LT((grown->forward(tokens) - base->forward(tokens)).abs().max().item<double>(), 1e-5);
  }
  // The copies are live: the loss has a gradient on their zero output projections.
  const torch::Tensor logits = grown->forward(tokens);
  logits.logsumexp(-1).sum().backward();
  EXPECT_GT(parameter(*grown, "blk.0.attn_output.weight").grad().abs().max().item<double>(), 0.0);
  EXPECT_GT(parameter(*grown, "blk.4.ffn_down.weight").grad().abs().max().item<double>(), 0.0);
  // And they matter once those projections are not zero.
  {
    torch::NoGradGuard no_grad;
    parameter(*grown, "blk.6.ffn_down.weight").normal_(0, 0.5);
    EXPECT_GT((grown->forward(tokens) - base->forward(tokens)).abs().max().item<double>(), 1e-3);
  }
}

INSTANTIATE_TEST_SUITE_P(Architectures, Expansion, ::testing::Values("llama", "afm-device"));

}  // namespace
}  // namespace afm::train
