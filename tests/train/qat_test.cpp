// Quantization-aware training (fake_quant.h, LanguageModel::attach_qat): the fake-quantized
// values are exactly what the runtime decodes from the exported file, gradients pass straight
// through, the factor initialisation beats no clipping, and a QAT model exported as q2_b /
// q4_0 runs in the engine with the logits of its training forward.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/error.h"
#include "gguf/reader.h"
#include "model/context.h"
#include "model/registry.h"
#include "quant/balanced_2bit.h"
#include "quant/block_formats.h"
#include "quant/tensor_encode.h"
#include "tiny_config.h"
#include "train/adamw.h"
#include "train/checkpoint.h"
#include "train/fake_quant.h"
#include "train/gguf_export.h"
#include "train/language_model.h"

namespace afm::train {
namespace {

namespace fs = std::filesystem;

std::vector<float> values(const torch::Tensor& t) {
  const torch::Tensor c = t.detach().to(torch::kFloat32).contiguous();
  return {c.data_ptr<float>(), c.data_ptr<float>() + c.numel()};
}

torch::Tensor gaussian(std::vector<int64_t> shape, uint64_t seed, double std = 0.02) {
  torch::manual_seed(seed);
  return torch::randn(shape) * std;
}

TEST(FakeQuant, Q2bEqualsTheDecodedFileFormat) {
  const torch::Tensor w = gaussian({5, 384}, 1);
  for (float f : {1.0f, 0.7f, 0.45f}) {
    const std::vector<float> fake = values(fake_quant_q2b(w, torch::tensor(f)));
    const std::vector<float> x = values(w);
    std::vector<quant::BlockQ2B> blocks(x.size() / 128);
    quant::quantize_row_q2b(x.data(), blocks.data(), x.size(), f);
    std::vector<float> decoded(x.size());
    quant::dequantize_row_q2b(blocks.data(), decoded.data(), x.size());
    for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(fake[i], decoded[i]) << "f " << f << " at " << i;
  }
}

TEST(FakeQuant, Q4EqualsTheDecodedFileFormat) {
  torch::Tensor w = gaussian({7, 64}, 2, 1.0);
  w.index_put_({0}, torch::zeros({64}));  // an all-zero block
  const std::vector<float> fake = values(fake_quant_q4_0(w));
  const std::vector<float> x = values(w);
  std::vector<uint8_t> bytes;
  quant::encode_tensor(x.data(), x.size(), gguf::TensorType::kQ4_0, bytes);
  std::vector<float> decoded(x.size());
  quant::decode_values(bytes.data(), x.size(), gguf::TensorType::kQ4_0, decoded.data());
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(fake[i], decoded[i]) << "at " << i;
}

TEST(FakeQuant, GradientsAreStraightThroughInsideTheGridAndStopOutside) {
  // One block: max |w| = 1.5, f = 0.5 -> d = 0.5, clamp range [-2d, 2d) = [-1, 1).
  std::vector<float> v(128, 0.1f);
  v[0] = 1.5f, v[1] = -1.4f, v[2] = 0.3f;
  torch::Tensor w = torch::tensor(v).reshape({1, 128}).set_requires_grad(true);
  torch::Tensor f = torch::tensor(0.5f).set_requires_grad(true);
  fake_quant_q2b(w, f).sum().backward();
  const std::vector<float> g = values(w.grad());
  EXPECT_EQ(g[0], 0.0f);  // clipped to the top level
  EXPECT_EQ(g[1], 0.0f);  // clipped to the bottom level
  EXPECT_EQ(g[2], 1.0f);
  EXPECT_EQ(g[3], 1.0f);
  // d(sum)/df = (max|w| / 1.5) * sum of the per-value d-derivatives: +1.5 and -1.5 for the two
  // clipped values, floor(w/d) - w/d + 0.5 for the others (0.3 / 0.5 = 0.6 -> -0.1; 0.1 / 0.5
  // = 0.2 -> 0.3, 125 times).
  const double want = 1.0 * (1.5 - 1.5 + (0 - 0.6 + 0.5) + 125 * (0 - 0.2 + 0.5));
  EXPECT_NEAR(f.grad().item<double>(), want, 1e-3);
}

TEST(FakeQuant, InitialFactorClipsBetterThanTheMaximum) {
  const torch::Tensor w = gaussian({64, 512}, 3);
  const double f = initial_q2b_factor(w);
  EXPECT_GT(f, 0.2);
  EXPECT_LT(f, 0.95);
  auto error = [&](double factor) {
    return (fake_quant_q2b(w, torch::tensor(static_cast<float>(factor))) - w).pow(2).mean().item<double>();
  };
  EXPECT_LT(error(f), 0.8 * error(1.0)) << "f_init " << f;
}

// A width that splits into 128-value blocks (the tiny test config's 64 does not).
ModelConfig qat_config() {
  ModelConfig c = testing::tiny_config("afm-device");
  c.embedding_length = 128, c.feed_forward_length = 256;
  return c;
}

TEST(Qat, AttachesFactorsTurnsDecayOffAndRefusesLora) {
  auto model = make_language_model(qat_config(), 1);
  const size_t before = model->trainable_parameters().size();
  model->attach_qat({});
  const auto factors = model->qat_factors();
  EXPECT_FALSE(factors.empty());
  EXPECT_EQ(model->trainable_parameters().size(), before + factors.size());
  for (const NamedParameter& p : model->trainable_parameters()) EXPECT_FALSE(p.decay) << p.gguf_name;
  for (const auto& [name, f] : factors) {
    EXPECT_GT(f, 0.2) << name;
    EXPECT_LE(f, 1.0) << name;
  }
  EXPECT_EQ(model->extra_state().size(), model->gguf_parameters().size() + 1);  // EMA, count
  EXPECT_THROW(model->attach_qat({}), Error);
  auto lora = make_language_model(qat_config(), 1);
  lora->attach_lora({});
  EXPECT_THROW(lora->attach_qat({}), Error);
}

TEST(Qat, EmaFollowsTheWeightsWithARampedDecay) {
  auto model = make_language_model(qat_config(), 1);
  model->attach_qat({true, true, 0.5});
  const NamedParameter& p = model->gguf_parameters()[0];
  const torch::Tensor start = p.tensor.detach().clone();
  auto step_by_one = [&] {
    torch::NoGradGuard no_grad;
    p.tensor.add_(1.0);
    model->after_optimizer_step();
  };
  step_by_one();  // update 0: decay min(0.5, 1 / 10) = 0.1 -> ema = 0.1 start + 0.9 (start + 1)
  step_by_one();  // update 1: decay min(0.5, 2 / 11) -> ema = d (start + 0.9) + (1 - d)(start + 2)
  const double d = 2.0 / 11.0;
  model->load_ema_weights();
  EXPECT_TRUE(torch::allclose(p.tensor, start + (d * 0.9 + (1 - d) * 2.0)));
}

TEST(Qat, CheckpointsKeepTheSettingsFactorsAndEma) {
  const fs::path dir = fs::temp_directory_path() / ("afm_qat_ckpt_" + std::to_string(getpid()));
  auto model = make_language_model(qat_config(), 1);
  model->attach_qat({true, false, 0.9});
  {
    torch::NoGradGuard no_grad;
    for (const NamedParameter& p : model->trainable_parameters()) p.tensor.mul_(0.5);
  }
  model->after_optimizer_step();
  AdamW opt(model->trainable_parameters(), {});
  save_checkpoint(dir.string(), *model, opt, {3, 1.0}, nlohmann::json::object());

  const auto spec = read_checkpoint_qat(dir.string());
  ASSERT_TRUE(spec.has_value());
  EXPECT_TRUE(spec->weights_2bit);
  EXPECT_FALSE(spec->embedding_4bit);
  EXPECT_DOUBLE_EQ(spec->ema_decay, 0.9);
  auto loaded = make_language_model(qat_config(), 2);
  loaded->attach_qat(*spec);
  load_checkpoint(dir.string(), *loaded, nullptr);
  EXPECT_EQ(loaded->qat_factors(), model->qat_factors());
  ASSERT_EQ(loaded->extra_state().size(), model->extra_state().size());
  for (size_t i = 0; i < model->extra_state().size(); ++i) {
    EXPECT_TRUE(torch::equal(loaded->extra_state()[i].tensor, model->extra_state()[i].tensor));
  }
  auto plain = make_language_model(qat_config(), 1);
  AdamW plain_opt(plain->trainable_parameters(), {});
  save_checkpoint(dir.string(), *plain, plain_opt, {1, 1.0}, nlohmann::json::object());
  EXPECT_FALSE(read_checkpoint_qat(dir.string()).has_value());
  fs::remove_all(dir);
}

TEST(Qat, ExportedModelDecodesToTheTrainingValuesAndRunsWithItsLogits) {
  const ModelConfig config = qat_config();
  auto model = make_language_model(config, 1);
  {
    torch::NoGradGuard no_grad;  // weights big enough for logits of several units
    torch::manual_seed(7);
    for (const NamedParameter& p : model->gguf_parameters()) {
      if (p.tensor.dim() == 1) p.tensor.copy_(1 + 0.1 * torch::randn_like(p.tensor));
      else p.tensor.copy_((p.gguf_name == "token_embd.weight" ? 1.0 : 0.1) * torch::randn_like(p.tensor));
    }
  }
  model->attach_qat({true, true, 0});
  const fs::path path = fs::temp_directory_path() / ("afm_qat_" + std::to_string(getpid()) + ".gguf");
  ExportOptions e;
  e.q2b_factors = model->qat_factors();
  e.embedding_type = gguf::TensorType::kQ4_0;
  export_gguf(*model, e, path.string());

  // Every tensor decodes to exactly the value the training forward used.
  {
    const gguf::File file = gguf::File::open(path.string());
    int q2b = 0;
    for (const gguf::TensorInfo& t : file.tensors()) {
      const NamedParameter* p = nullptr;
      for (const NamedParameter& q : model->gguf_parameters()) if (q.gguf_name == t.name) p = &q;
      ASSERT_NE(p, nullptr) << t.name;
      torch::Tensor want = p->tensor;
      if (t.type == gguf::TensorType::kQ2_B) {
        ++q2b;
        double f = 0;
        for (const auto& [name, value] : e.q2b_factors) if (name == t.name) f = value;
        want = fake_quant_q2b(want, torch::tensor(static_cast<float>(f)));
      } else if (t.name == "token_embd.weight") {
        ASSERT_EQ(t.type, gguf::TensorType::kQ4_0);
        want = fake_quant_q4_0(want);
      }
      const std::vector<float> w = values(want);
      std::vector<float> got(w.size());
      quant::decode_values(static_cast<const uint8_t*>(t.data), got.size(), t.type, got.data());
      ASSERT_EQ(got, w) << t.name;
    }
    EXPECT_EQ(static_cast<size_t>(q2b), e.q2b_factors.size());
  }

  // The engine's logits (int8 activations against the stored codes) follow the training forward.
  std::vector<int32_t> tokens;
  for (int i = 0; i < 19; ++i) tokens.push_back((i * 37 + 11) % config.vocab_size);
  torch::Tensor expected;
  {
    torch::NoGradGuard no_grad;
    expected = model->forward(torch::tensor(std::vector<int64_t>(tokens.begin(), tokens.end()))
                                  .unsqueeze(0)).squeeze(0).contiguous();
  }
  const float range = expected.abs().max().item<float>();
  EXPECT_GT(range, 3.0f) << "weights too small for the bound";
  model::Context context(model::load_model(path.string()),
                         {.n_ctx = 64, .n_threads = 2, .n_batch = 8, .kv_type = ops::KvType::kF32});
  fs::remove(path);
  const std::vector<float> logits = context.eval_all(tokens);
  ASSERT_EQ(logits.size(), static_cast<size_t>(expected.numel()));
  const float* want = expected.data_ptr<float>();
  float worst = 0;
  for (size_t i = 0; i < logits.size(); ++i) worst = std::max(worst, std::fabs(logits[i] - want[i]));
  EXPECT_LE(worst, 0.03f * range);
}

}  // namespace
}  // namespace afm::train
