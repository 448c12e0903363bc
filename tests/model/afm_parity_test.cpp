// The afm architectures against outside references, and the int8 KV cache against f16:
//   afm-device: Apple's mlx_lm/models/afm7.py (tests/oracle/make_afm_device_fixture.py) on a
//     tiny random afm7 model saved by mlx and imported with `afm convert`;
//   afm-server: an independent numpy implementation of docs/gguf.md's semantics
//     (tests/oracle/afm_server_reference.py, make_afm_server_fixture.py).
// reference.json: prompt_ids, prompt_logits (every prompt position), greedy_tokens, and
// decode_logits (row i: the logits after feeding greedy_tokens[i]).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "hf/converter.h"
#include "model/context.h"
#include "model/registry.h"

namespace afm::model {
namespace {

namespace fs = std::filesystem;

struct Reference {
  std::vector<int32_t> prompt, greedy;
  std::vector<std::vector<float>> prompt_logits, decode_logits;
};

Reference read_reference(const std::string& dir) {
  std::ifstream in(dir + "/reference.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  return {j["prompt_ids"].get<std::vector<int32_t>>(), j["greedy_tokens"].get<std::vector<int32_t>>(),
          j["prompt_logits"].get<std::vector<std::vector<float>>>(),
          j["decode_logits"].get<std::vector<std::vector<float>>>()};
}

// A fixture folder holds either a GGUF (tiny.gguf) or a model folder for `afm convert`.
std::shared_ptr<const Model> load_fixture(const std::string& dir) {
  if (fs::exists(dir + "/tiny.gguf")) return load_model(dir + "/tiny.gguf");
  const fs::path out = fs::temp_directory_path() / ("afm_parity_" + std::to_string(getpid()) + ".gguf");
  hf::convert_hf_to_gguf({dir, out.string(), gguf::TensorType::kF32});
  std::shared_ptr<const Model> model = load_model(out.string());
  fs::remove(out);
  return model;
}

float max_diff(std::span<const float> a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

int32_t argmax(std::span<const float> v) {
  return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

ContextOptions f32_options(int threads, int64_t batch) {
  return {.n_ctx = 256, .n_threads = threads, .n_batch = batch, .kv_type = ops::KvType::kF32};
}

class AfmParity : public ::testing::TestWithParam<std::string> {};

TEST_P(AfmParity, PromptLogitsWithin1e3InF32) {
  const Reference ref = read_reference(GetParam());
  const auto model = load_fixture(GetParam());
  const int64_t n_vocab = model->hparams().n_vocab;
  for (int threads : {1, 2, 3}) {
    Context ctx(model, f32_options(threads, 512));
    const std::vector<float> logits = ctx.eval_all(ref.prompt);
    for (size_t t = 0; t < ref.prompt.size(); ++t) {
      EXPECT_LE(max_diff({logits.data() + t * n_vocab, size_t(n_vocab)}, ref.prompt_logits[t]), 1e-3f)
          << "position " << t << ", " << threads << " threads";
    }
  }
}

// Prefill (the last position's logits only: afm-device skips Block 2 elsewhere), then greedy
// decoding one token at a time through the KV cache, in one batch and in chunks of 5.
TEST_P(AfmParity, GreedyDecodeMatchesWithin1e3InF32) {
  const Reference ref = read_reference(GetParam());
  const auto model = load_fixture(GetParam());
  for (int64_t batch : {512, 5}) {
    Context ctx(model, f32_options(2, batch));
    std::span<const float> logits = ctx.eval(ref.prompt);
    EXPECT_LE(max_diff(logits, ref.prompt_logits.back()), 1e-3f);
    for (size_t i = 0; i < ref.greedy.size(); ++i) {
      ASSERT_EQ(argmax(logits), ref.greedy[i]) << "step " << i << ", batch " << batch;
      logits = ctx.eval(std::span<const int32_t>(&ref.greedy[i], 1));
      ASSERT_LE(max_diff(logits, ref.decode_logits[i]), 1e-3f) << "step " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, AfmParity,
                         ::testing::Values("tests/data/afm7", "tests/data/afm_server"),
                         [](const auto& info) { return fs::path(info.param).filename().string(); });

// Top-1 agreement of the int8 KV cache with the f16 cache, teacher-forced over every fixture's
// prompt and greedy continuation: at least 99% (the bar).
TEST(Int8KvCache, Top1AgreesWithF16OnAtLeast99PercentOfFixturePositions) {
  int agree = 0, total = 0;
  for (const std::string dir : {"tests/data/afm7", "tests/data/afm_server", "tests/data/hf/llama",
                                "tests/data/hf/qwen2", "tests/data/hf/qwen3"}) {
    const nlohmann::json j = nlohmann::json::parse(std::ifstream(dir + "/reference.json"));
    std::vector<int32_t> tokens = j["prompt_ids"].get<std::vector<int32_t>>();
    for (int32_t t : j["greedy_tokens"].get<std::vector<int32_t>>()) tokens.push_back(t);
    const auto model = load_fixture(dir);
    const int64_t n_vocab = model->hparams().n_vocab;
    Context f16(model, {.n_ctx = 256, .n_threads = 2, .n_batch = 512, .kv_type = ops::KvType::kF16});
    Context q8(model, {.n_ctx = 256, .n_threads = 2, .n_batch = 512, .kv_type = ops::KvType::kQ8});
    const std::vector<float> a = f16.eval_all(tokens), b = q8.eval_all(tokens);
    for (size_t t = 0; t < tokens.size(); ++t, ++total) {
      agree += argmax({a.data() + t * n_vocab, size_t(n_vocab)}) ==
               argmax({b.data() + t * n_vocab, size_t(n_vocab)});
    }
    // A cached row of head_dim values: 2 x head_dim bytes in f16; head_dim int8 bytes plus a
    // 4-byte absmax scale in q8, or no scale where the layer has a learned one.
    const double f16_bytes = static_cast<double>(f16.state().kv_bytes_per_token());
    const double q8_bytes = static_cast<double>(q8.state().kv_bytes_per_token());
    const double head_dim = static_cast<double>(model->hparams().head_dim);
    EXPECT_GE(q8_bytes, f16_bytes / 2) << dir;
    EXPECT_LE(q8_bytes, f16_bytes / 2 * (1 + 4 / head_dim)) << dir;
  }
  EXPECT_GE(agree, total * 99 / 100) << agree << " of " << total;
}

}  // namespace
}  // namespace afm::model
