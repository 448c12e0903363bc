// The engine against Hugging Face transformers: tests/data/hf/<arch>/reference.json holds
// transformers' float32 logits for a fixed prompt and its 64-token greedy continuation
// (tests/oracle/make_engine_reference.py). The HF folder is converted to an f32 GGUF and run.
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

struct Fixture {
  std::vector<int32_t> prompt;
  std::vector<std::vector<float>> prompt_logits;
  std::vector<int32_t> greedy;
};

Fixture read_hf_reference(const std::string& arch) {
  std::ifstream in("tests/data/hf/" + arch + "/reference.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  return {j["prompt_ids"].get<std::vector<int32_t>>(),
          j["prompt_logits"].get<std::vector<std::vector<float>>>(),
          j["greedy_tokens"].get<std::vector<int32_t>>()};
}

std::shared_ptr<const Model> convert_and_load(const std::string& arch, gguf::TensorType type) {
  const fs::path out = fs::temp_directory_path() /
                       ("afm_parity_" + arch + "_" + std::to_string(getpid()) + ".gguf");
  hf::convert_hf_to_gguf({"tests/data/hf/" + arch, out.string(), type});
  std::shared_ptr<const Model> model = load_model(out.string());
  fs::remove(out);  // the mapping stays valid after unlink
  return model;
}

int32_t hf_argmax(std::span<const float> v) {
  return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

std::vector<int32_t> greedy(Context& ctx, const std::vector<int32_t>& prompt, int steps) {
  std::vector<int32_t> out;
  std::span<const float> logits = ctx.eval(prompt);
  for (int i = 0; i < steps; ++i) {
    out.push_back(hf_argmax(logits));
    logits = ctx.eval(std::span<const int32_t>(&out.back(), 1));
  }
  return out;
}

class HfParity : public ::testing::TestWithParam<std::string> {};

TEST_P(HfParity, PromptLogitsWithin1e3InF32) {
  const Fixture ref = read_hf_reference(GetParam());
  auto model = convert_and_load(GetParam(), gguf::TensorType::kF32);
  for (int threads : {1, 2}) {
    Context ctx(model, {.n_ctx = 256, .n_threads = threads, .n_batch = 512,
                        .kv_type = ops::KvType::kF32});
    const std::vector<float> logits = ctx.eval_all(ref.prompt);
    const int64_t n_vocab = model->hparams().n_vocab;
    float max_diff = 0;
    for (size_t t = 0; t < ref.prompt.size(); ++t) {
      ASSERT_EQ(ref.prompt_logits[t].size(), static_cast<size_t>(n_vocab));
      for (int64_t i = 0; i < n_vocab; ++i) {
        max_diff = std::max(max_diff, std::fabs(logits[t * n_vocab + i] - ref.prompt_logits[t][i]));
      }
    }
    EXPECT_LE(max_diff, 1e-3f) << "threads " << threads;
  }
}

TEST_P(HfParity, Greedy64TokensIdenticalInF32) {
  const Fixture ref = read_hf_reference(GetParam());
  auto model = convert_and_load(GetParam(), gguf::TensorType::kF32);
  Context ctx(model, {.n_ctx = 256, .n_threads = 2, .n_batch = 512, .kv_type = ops::KvType::kF32});
  EXPECT_EQ(greedy(ctx, ref.prompt, 64), ref.greedy);
}

TEST_P(HfParity, ChunkedPrefillMatchesOneBatch) {
  const Fixture ref = read_hf_reference(GetParam());
  auto model = convert_and_load(GetParam(), gguf::TensorType::kF32);
  Context whole(model, {.n_ctx = 256, .n_threads = 2, .n_batch = 512, .kv_type = ops::KvType::kF32});
  Context chunked(model, {.n_ctx = 256, .n_threads = 2, .n_batch = 7, .kv_type = ops::KvType::kF32});
  const std::vector<float> a = whole.eval_all(ref.prompt);
  const std::vector<float> b = chunked.eval_all(ref.prompt);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-4f) << i;
}

// mistral and phi3: a sliding window of 8 positions over a 28-token prompt and 64 decode
// steps; phi3 also has fused q/k/v and gate/up tensors; smollm3's fourth layer has no RoPE;
// gemma2 / gemma3: sandwich norms, GeGLU, scaled embeddings, windows in alternate / five of six
// layers, soft-capping (2), QK-norm and a local RoPE base (3). (Their tied heads make the
// greedy continuation repeat one token; the prompt logits carry the comparison.)
INSTANTIATE_TEST_SUITE_P(Archs, HfParity, ::testing::Values("llama", "qwen2", "qwen3", "mistral",
                                                                 "phi3", "smollm3", "gemma2",
                                                                 "gemma3"));

}  // namespace
}  // namespace afm::model
