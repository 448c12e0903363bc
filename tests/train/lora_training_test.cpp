// LoRA in the training models (language_model.h attach_lora, lora_weight.h, lora_export.h):
// - attaching branches leaves the function unchanged (B starts at zero) and freezes the base:
//   after backward only A and B have gradients, and A's is zero while B is zero;
// - the unmerged branch computes the merged weight's function (merge_lora), for every
//   architecture including afm-server's stacked experts;
// - the exported adapter file, loaded by the runtime on the exported base, gives the training
//   model's logits within 1e-3 (the runtime's unmerged kernels as the oracle of the export);
// - afm-device's Block-2 layers get no K/V branches; unknown targets and bad specs are errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "base/error.h"
#include "model/context.h"
#include "model/lora.h"
#include "model/registry.h"
#include "tiny_config.h"
#include "train/gguf_export.h"
#include "train/language_model.h"
#include "train/lora_export.h"

namespace afm::train {
namespace {

namespace fs = std::filesystem;
using testing::tiny_config;

torch::Tensor sample_tokens(const ModelConfig& config, int64_t n) {
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < n; ++i) ids.push_back((i * 37 + 11) % config.vocab_size);
  return torch::tensor(ids).unsqueeze(0);
}

// Larger-than-initial weights so logits span several units and the bounds mean something.
void redraw(const std::vector<NamedParameter>& params, double matrix_std) {
  torch::NoGradGuard no_grad;
  for (const NamedParameter& p : params) {
    if (p.tensor.dim() == 1) {
      p.tensor.copy_(1 + 0.1 * torch::randn_like(p.tensor));
    } else {
      const double std = p.gguf_name == "token_embd.weight" ? 1.0 : matrix_std;
      p.tensor.copy_(std * torch::randn_like(p.tensor));
    }
  }
}

torch::Tensor logits_of(LanguageModel& model, const torch::Tensor& ids) {
  torch::NoGradGuard no_grad;
  return model.forward(ids).squeeze(0).contiguous();
}

class LoraTraining : public ::testing::TestWithParam<std::string> {};

TEST_P(LoraTraining, AttachingKeepsTheFunctionAndFreezesTheBase) {
  const ModelConfig config = tiny_config(GetParam());
  auto model = make_language_model(config, 1);
  const torch::Tensor ids = sample_tokens(config, 17);
  const torch::Tensor before = logits_of(*model, ids);
  model->attach_lora({.rank = 4, .alpha = 8});
  EXPECT_TRUE(torch::equal(before, logits_of(*model, ids)));

  torch::nn::functional::cross_entropy(model->forward(ids).squeeze(0), ids.squeeze(0)).backward();
  for (const NamedParameter& p : model->gguf_parameters())
    EXPECT_FALSE(p.tensor.grad().defined()) << p.gguf_name;
  int64_t pairs = 0;
  for (const NamedParameter& p : model->trainable_parameters()) {
    ASSERT_TRUE(p.tensor.grad().defined()) << p.gguf_name;
    const bool is_a = p.gguf_name.ends_with(".lora_a");
    // dL/dA = s B^T dW is zero while B is; dL/dB = s dW A^T is not.
    if (is_a) {
      EXPECT_EQ(p.tensor.grad().abs().max().item<float>(), 0.0f) << p.gguf_name;
      ++pairs;
    } else {
      EXPECT_GT(p.tensor.grad().abs().max().item<float>(), 0.0f) << p.gguf_name;
    }
  }
  EXPECT_EQ(pairs, static_cast<int64_t>(model->lora_pairs().size()));
  EXPECT_GT(pairs, 0);
}

TEST_P(LoraTraining, BranchComputesTheMergedWeightsFunction) {
  const ModelConfig config = tiny_config(GetParam());
  auto model = make_language_model(config, 1);
  const torch::Tensor ids = sample_tokens(config, 19);
  const torch::Tensor base = logits_of(*model, ids);
  model->attach_lora({.rank = 3, .alpha = 6, .dropout = 0.5});
  torch::manual_seed(3);
  redraw(model->trainable_parameters(), 0.2);  // B away from zero
  model->eval();                               // dropout off: the function is deterministic
  const torch::Tensor unmerged = logits_of(*model, ids);
  EXPECT_GT((unmerged - base).abs().max().item<float>(), 1e-2f) << "the branch changes nothing";
  model->merge_lora();
  EXPECT_FALSE(model->has_lora());
  const torch::Tensor merged = logits_of(*model, ids);
  EXPECT_LE((unmerged - merged).abs().max().item<float>(),
            1e-4f * (1 + merged.abs().max().item<float>()));
}

TEST(LoraDropout, OnlyWhileTraining) {
  const ModelConfig config = tiny_config("llama");
  auto model = make_language_model(config, 1);
  model->attach_lora({.rank = 3, .alpha = 6, .dropout = 0.5});
  redraw(model->trainable_parameters(), 0.2);
  const torch::Tensor ids = sample_tokens(config, 9);
  model->eval();
  const torch::Tensor a = logits_of(*model, ids);
  EXPECT_TRUE(torch::equal(a, logits_of(*model, ids)));
  model->train();
  EXPECT_FALSE(torch::equal(a, logits_of(*model, ids)));
}

TEST_P(LoraTraining, ExportedAdapterRunsInTheRuntimeWithTheSameLogits) {
  const ModelConfig config = tiny_config(GetParam());
  auto model = make_language_model(config, 1);
  torch::manual_seed(7);
  redraw(model->gguf_parameters(), 0.15);
  const fs::path dir = fs::temp_directory_path() / ("afm_lora_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string base = (dir / "base.gguf").string(), adapter = (dir / "adapter.gguf").string();
  export_gguf(*model, {}, base);
  model->attach_lora({.rank = 4, .alpha = 8});
  redraw(model->trainable_parameters(), 0.3);
  const int64_t written = export_lora_adapter(*model, base, {}, adapter);
  EXPECT_EQ(written, static_cast<int64_t>(model->lora_pairs().size()));

  const torch::Tensor ids = sample_tokens(config, 21);
  model->eval();
  const torch::Tensor want = logits_of(*model, ids);
  std::shared_ptr<const model::Model> engine = model::load_model(base);
  auto lora = model::LoraAdapter::load(adapter, engine->file());
  model::Context context(engine, {.n_ctx = 64, .n_threads = 2, .n_batch = 8,
                                  .kv_type = ops::KvType::kF32, .adapter = lora});
  std::vector<int32_t> tokens(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + ids.numel());
  const std::vector<float> got = context.eval_all(tokens);
  ASSERT_EQ(got.size(), static_cast<size_t>(want.numel()));
  float worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::fabs(got[i] - want.data_ptr<float>()[i]));
  EXPECT_LE(worst, 1e-3f) << config.arch;
  // The adapter is not a no-op: the base alone differs.
  model::Context plain(engine, {.n_ctx = 64, .n_threads = 2, .n_batch = 8,
                                .kv_type = ops::KvType::kF32});
  const std::vector<float> base_logits = plain.eval_all(tokens);
  float diff = 0;
  for (size_t i = 0; i < got.size(); ++i) diff = std::max(diff, std::fabs(got[i] - base_logits[i]));
  EXPECT_GT(diff, 0.1f);
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Archs, LoraTraining,
                         ::testing::Values("llama", "afm-device", "afm-server"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(LoraTargets, Block2LayersHaveNoKeyValueBranches) {
  const ModelConfig config = tiny_config("afm-device");  // Block 2 from layer 3
  auto model = make_language_model(config, 1);
  model->attach_lora({.rank = 2});
  std::set<std::string> names;
  for (const LoraPair& p : model->lora_pairs()) names.insert(p.base_name);
  EXPECT_TRUE(names.count("blk.2.attn_k.weight"));
  EXPECT_FALSE(names.count("blk.3.attn_k.weight"));
  EXPECT_FALSE(names.count("blk.3.attn_v.weight"));
  EXPECT_TRUE(names.count("blk.3.attn_q.weight"));
  EXPECT_TRUE(names.count("blk.3.attn_output.weight"));
  EXPECT_TRUE(names.count("blk.3.ffn_down.weight"));
  EXPECT_FALSE(names.count("token_embd.weight"));
}

TEST(LoraTargets, ChosenKindsOnlyAndServerExperts) {
  auto model = make_language_model(tiny_config("afm-server"), 1);
  model->attach_lora({.rank = 2, .targets = {"attn_q", "ffn_up_exps"}});
  for (const LoraPair& p : model->lora_pairs()) {
    EXPECT_TRUE(p.base_name.ends_with("attn_q.weight") ||
                p.base_name.ends_with("ffn_up_exps.weight")) << p.base_name;
    if (p.base_name.ends_with("_exps.weight")) {
      EXPECT_EQ(p.a.dim(), 3);
      EXPECT_EQ(p.b.dim(), 3);
    }
  }
  EXPECT_FALSE(model->lora_pairs().empty());
}

TEST(LoraTargets, BadSpecsAreErrors) {
  auto expect_invalid = [](const LoraSpec& spec, const std::string& fragment) {
    auto model = make_language_model(tiny_config("llama"), 1);
    try {
      model->attach_lora(spec);
      FAIL() << "accepted " << fragment;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_invalid({.rank = 2, .targets = {"attn_qq"}}, "LoRA target attn_qq");
  expect_invalid({.rank = 2, .targets = {"ffn_up_exps"}}, "has no such weight");
  expect_invalid({.rank = 0}, "rank");
  expect_invalid({.rank = 2, .dropout = 1.0}, "dropout");
  auto model = make_language_model(tiny_config("llama"), 1);
  model->attach_lora({.rank = 2});
  EXPECT_THROW(model->attach_lora({.rank = 2}), Error);
}

}  // namespace
}  // namespace afm::train
