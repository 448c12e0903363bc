// The trainer and the runtime compute the same function: a libtorch model of each trainable
// architecture is exported to GGUF (f32) and run by the engine; logits agree within 1e-3 at
// every position. Weights are re-drawn larger than the training initialisation so logits
// span several units and the bound means something; the afm-server case has a window shorter
// than the sequence and a mixture of experts, the afm-device case a Block-1/Block-2 split.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "model/context.h"
#include "model/registry.h"
#include "tiny_config.h"
#include "train/gguf_export.h"
#include "train/language_model.h"

namespace afm::train {
namespace {

namespace fs = std::filesystem;

using testing::tiny_config;

// Norms 1 + noise, matrices with standard deviation 0.15 (embedding 1.0): logits of order 10.
void redraw_weights(LanguageModel& model) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(7);
  for (const NamedParameter& p : model.gguf_parameters()) {
    if (p.tensor.dim() == 1) {
      p.tensor.copy_(1 + 0.1 * torch::randn_like(p.tensor));
    } else {
      const double std = p.gguf_name == "token_embd.weight" ? 1.0 : 0.15;
      p.tensor.copy_(std * torch::randn_like(p.tensor));
    }
  }
}

class ExportParity : public ::testing::TestWithParam<std::string> {};

TEST_P(ExportParity, RuntimeLogitsMatchTheTrainingModelWithin1e3) {
  const ModelConfig config = tiny_config(GetParam());
  auto trained = make_language_model(config, 1);
  redraw_weights(*trained);
  const fs::path path = fs::temp_directory_path() /
                        ("afm_export_parity_" + std::to_string(getpid()) + ".gguf");
  export_gguf(*trained, {}, path.string());

  std::vector<int32_t> tokens;
  for (int i = 0; i < 23; ++i) tokens.push_back((i * 37 + 11) % config.vocab_size);
  torch::Tensor ids = torch::tensor(std::vector<int64_t>(tokens.begin(), tokens.end()))
                          .unsqueeze(0);
  torch::Tensor expected;
  {
    torch::NoGradGuard no_grad;
    expected = trained->forward(ids).squeeze(0).contiguous();  // (T, vocab)
  }
  EXPECT_GT(expected.abs().max().item<float>(), 3.0f) << "weights too small for the bound";

  auto engine = model::load_model(path.string());
  fs::remove(path);
  model::Context context(std::move(engine), {.n_ctx = 64, .n_threads = 2, .n_batch = 8,
                                             .kv_type = ops::KvType::kF32});
  const std::vector<float> logits = context.eval_all(tokens);
  ASSERT_EQ(logits.size(), static_cast<size_t>(expected.numel()));
  const float* want = expected.data_ptr<float>();
  float worst = 0;
  for (size_t i = 0; i < logits.size(); ++i) worst = std::max(worst, std::fabs(logits[i] - want[i]));
  EXPECT_LE(worst, 1e-3f) << config.arch;
}

INSTANTIATE_TEST_SUITE_P(Archs, ExportParity,
                         ::testing::Values("llama", "afm-device", "afm-server"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace afm::train
