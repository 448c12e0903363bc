// The unmerged LoRA runtime (model/lora_apply.h) on every registered architecture: scale 0
// gives the base logits bit for bit, an adapter changes them, the unmerged adapter equals the
// merged model (`afm adapter merge`'s code), sequences with and without an adapter share one
// Model without disturbing each other, and the matmul-kernel path equals the scalar reference.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "adapter_merge.h"
#include "base/half.h"
#include "model/context.h"
#include "model/lora_apply.h"
#include "model/registry.h"
#include "model/tiny_models.h"

namespace afm::model {
namespace {

namespace fs = std::filesystem;

std::string runtime_temp(const std::string& name) {
  return (fs::temp_directory_path() / ("afm_lorart_" + std::to_string(getpid()) + "_" + name))
      .string();
}

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  float m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

float max_abs(const std::vector<float>& a) {
  float m = 0;
  for (float v : a) m = std::max(m, std::fabs(v));
  return m;
}

class LoraArch : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    base_path = runtime_temp(GetParam() + ".gguf");
    testing::write_tiny_model(GetParam(), base_path);
    model = load_model(base_path);
    adapter_path = runtime_temp(GetParam() + "-lora.gguf");
    cli::RandomAdapterOptions o;
    o.rank = 4;
    o.alpha = 8;
    o.std_b = 0.1f;
    cli::write_random_adapter(model->file(), o, adapter_path);
    adapter = LoraAdapter::load(adapter_path, model->file());
  }
  void TearDown() override {
    fs::remove(base_path);
    fs::remove(adapter_path);
  }
  std::vector<float> logits(const std::shared_ptr<const Model>& m,
                            std::shared_ptr<const LoraAdapter> a, float scale, int64_t batch = 64) {
    ContextOptions o;
    o.n_ctx = 64;
    o.n_threads = 2;
    o.n_batch = batch;
    o.kv_type = ops::KvType::kF32;
    o.adapter = std::move(a);
    o.adapter_scale = scale;
    Context ctx(m, o);
    return ctx.eval_all(tokens());
  }
  std::vector<int32_t> tokens() const {
    std::vector<int32_t> t;
    for (int i = 0; i < 13; ++i) t.push_back((i * 37 + 11) % model->hparams().n_vocab);
    return t;
  }
  std::string base_path, adapter_path;
  std::shared_ptr<const Model> model;
  std::shared_ptr<const LoraAdapter> adapter;
};

TEST_P(LoraArch, ScaleZeroIsTheBaseExactly) {
  EXPECT_EQ(logits(model, adapter, 0.0f), logits(model, nullptr, 1.0f));
}

TEST_P(LoraArch, UnmergedEqualsMerged) {
  const std::vector<float> base = logits(model, nullptr, 1.0f);
  for (float scale : {1.0f, -0.5f}) {
    const std::vector<float> unmerged = logits(model, adapter, scale);
    EXPECT_GT(max_abs_diff(unmerged, base), 1e-2f) << "the adapter changes nothing";
    const std::string merged_path = runtime_temp(GetParam() + "-merged.gguf");
    cli::merge_adapter(model->file(), *adapter, scale, merged_path);
    const std::vector<float> merged = logits(load_model(merged_path), nullptr, 1.0f);
    fs::remove(merged_path);
    EXPECT_LE(max_abs_diff(unmerged, merged), 1e-4f * std::max(1.0f, max_abs(merged)))
        << "scale " << scale;
  }
}

TEST_P(LoraArch, ChunkedPrefillEqualsOneBatch) {
  const std::vector<float> one = logits(model, adapter, 1.0f);
  const std::vector<float> chunked = logits(model, adapter, 1.0f, 3);
  EXPECT_LE(max_abs_diff(one, chunked), 1e-4f * std::max(1.0f, max_abs(one)));
}

TEST_P(LoraArch, SequencesOnDifferentAdaptersShareTheBase) {
  const std::vector<float> base = logits(model, nullptr, 1.0f);
  const std::vector<float> adapted = logits(model, adapter, 1.0f);
  ContextOptions o;
  o.n_ctx = 64;
  o.n_threads = 1;
  o.kv_type = ops::KvType::kF32;
  Context plain(model, o);
  o.adapter = adapter;
  Context lora(model, o);
  const int64_t n_vocab = model->hparams().n_vocab;
  for (size_t i = 0; i < tokens().size(); ++i) {  // interleaved, one token at a time
    const std::vector<int32_t> one{tokens()[i]};
    const std::vector<float> a = lora.eval_all(one), b = plain.eval_all(one);
    for (int64_t v = 0; v < n_vocab; ++v) {
      ASSERT_NEAR(a[v], adapted[i * n_vocab + v], 1e-3f * std::max(1.0f, max_abs(adapted)));
      ASSERT_NEAR(b[v], base[i * n_vocab + v], 1e-3f * std::max(1.0f, max_abs(base)));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllRegistered, LoraArch, ::testing::ValuesIn(registered_archs()),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return s;
                         });

// lora_add (the matmul kernels) against lora_add_reference (scalar, float64).
TEST(LoraApply, KernelPathMatchesScalarReference) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0, 1);
  for (gguf::TensorType type : {gguf::TensorType::kF32, gguf::TensorType::kF16}) {
    for (int64_t tokens : {1, 3, 7}) {
      const int64_t in = 64, out = 48, rank = 8, stack = 2;
      std::vector<float> a32(stack * rank * in), b32(stack * out * rank), x(tokens * in);
      for (float& v : a32) v = normal(rng);
      for (float& v : b32) v = normal(rng);
      for (float& v : x) v = normal(rng);
      std::vector<uint16_t> a16(a32.size()), b16(b32.size());
      for (size_t i = 0; i < a32.size(); ++i) a16[i] = f32_to_f16(a32[i]);
      for (size_t i = 0; i < b32.size(); ++i) b16[i] = f32_to_f16(b32[i]);
      const bool f16 = type == gguf::TensorType::kF16;
      const size_t elt = f16 ? 2 : 4;
      LoraPair p;
      p.rank = rank, p.in = in, p.out = out, p.n_stack = stack;
      p.a = {type, f16 ? static_cast<const void*>(a16.data()) : a32.data(), stack * rank, in, in * elt};
      p.b = {type, f16 ? static_cast<const void*>(b16.data()) : b32.data(), stack * out, rank, rank * elt};
      transpose_lora_b(p);
      const LoraTarget t{&p, 0.75f};
      for (int threads : {1, 3}) {
        ThreadPool pool(threads);
        LoraScratch s;
        s.reserve(tokens, in, rank, threads);
        std::vector<float> got(tokens * out, 1.0f), want(tokens * out, 1.0f);
        lora_add(x.data(), tokens, t, 1, got.data(), s, pool);
        lora_add_reference(x.data(), tokens, t, 1, want.data());
        // The group entry point: fused for tokens <= kLoraFusedTokens, two targets at once.
        std::vector<float> got_a(tokens * out, 1.0f), got_b(tokens * out, 1.0f);
        const LoraTarget t0{&p, 0.75f}, none{};
        lora_add_group(x.data(), tokens, {{&t0, 1, got_a.data()}, {&none, 0, nullptr},
                                          {&t0, 1, got_b.data()}}, s, pool);
        // f16 weights see f16-rounded activations (as llama.cpp computes them).
        const float tol = f16 ? 2e-2f : 1e-4f;
        for (size_t i = 0; i < got.size(); ++i) {
          const float bound = tol * std::max(1.0f, std::fabs(want[i]));
          ASSERT_NEAR(got[i], want[i], bound) << "type " << static_cast<int>(type) << " tokens " << tokens << " i " << i;
          ASSERT_NEAR(got_a[i], want[i], bound) << "group, tokens " << tokens << " i " << i;
          ASSERT_NEAR(got_b[i], want[i], bound) << "group, tokens " << tokens << " i " << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace afm::model
