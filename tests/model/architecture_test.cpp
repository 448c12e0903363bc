// One table-driven test over every registered architecture, each with tiny random weights
// (tiny_models.h): loading, describe(), chunked prefill == one batch == teacher forcing ==
// token-by-token decode, results independent of the thread count, every KV cache type, and
// typed errors for contexts that overflow. Parity with outside oracles lives in the
// *_parity tests; this one checks that every architecture honours the engine's contracts.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "base/error.h"
#include "model/context.h"
#include "model/registry.h"
#include "tiny_models.h"

namespace afm::model {
namespace {

namespace fs = std::filesystem;

std::shared_ptr<const Model> tiny(const std::string& arch) {
  const fs::path path = fs::temp_directory_path() /
                        ("afm_tiny_" + arch + "_" + std::to_string(getpid()) + ".gguf");
  testing::write_tiny_model(arch, path.string());
  std::shared_ptr<const Model> m = load_model(path.string());
  fs::remove(path);  // the mapping stays valid
  return m;
}

std::vector<int32_t> prompt(int64_t n_vocab, int n) {
  std::vector<int32_t> p;
  for (int i = 0; i < n; ++i) p.push_back(static_cast<int32_t>((i * 37 + 11) % n_vocab));
  return p;
}

ContextOptions options(int threads, int64_t batch, ops::KvType kv = ops::KvType::kF32) {
  ContextOptions o;
  o.n_ctx = 64;
  o.n_threads = threads;
  o.n_batch = batch;
  o.kv_type = kv;
  return o;
}

float max_abs_diff(std::span<const float> a, std::span<const float> b) {
  float m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

int32_t arch_argmax(std::span<const float> v) {
  return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

class Architecture : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { model = tiny(GetParam()); }
  std::shared_ptr<const Model> model;
};

TEST_P(Architecture, LoadsAndDescribesItself) {
  EXPECT_EQ(model->hparams().arch, GetParam());
  EXPECT_FALSE(model->describe().empty());
}

TEST_P(Architecture, PrefillChunkingTeacherForcingAndDecodeAgree) {
  const int64_t n_vocab = model->hparams().n_vocab;
  const std::vector<int32_t> p = prompt(n_vocab, 20);
  Context all(model, options(2, 64));
  const std::vector<float> every = all.eval_all(p);
  const std::span<const float> last_row(every.data() + (p.size() - 1) * n_vocab, n_vocab);

  Context one_batch(model, options(2, 64));
  EXPECT_LT(max_abs_diff(one_batch.eval(p), last_row), 1e-4f);
  Context chunked(model, options(2, 3));
  EXPECT_LT(max_abs_diff(chunked.eval(p), last_row), 1e-4f);

  // Decode one token at a time after a 5-token prompt: row i of teacher forcing each step.
  Context step(model, options(2, 64));
  step.eval(std::span<const int32_t>(p.data(), 5));
  for (size_t i = 5; i < p.size(); ++i) {
    const std::span<const float> got = step.eval(std::span<const int32_t>(&p[i], 1));
    const std::span<const float> want(every.data() + i * n_vocab, n_vocab);
    ASSERT_LT(max_abs_diff(got, want), 1e-4f) << "position " << i;
  }
}

TEST_P(Architecture, ResultsDoNotDependOnThreadCount) {
  const std::vector<int32_t> p = prompt(model->hparams().n_vocab, 12);
  Context one(model, options(1, 64));
  const std::vector<float> reference = one.eval_all(p);
  for (int threads : {2, 3, 4}) {
    Context many(model, options(threads, 64));
    EXPECT_LT(max_abs_diff(many.eval_all(p), reference), 1e-5f) << threads << " threads";
  }
}

TEST_P(Architecture, EveryKvCacheTypeRunsAndQ8HalvesF16) {
  const int64_t n_vocab = model->hparams().n_vocab;
  const std::vector<int32_t> p = prompt(n_vocab, 16);
  Context f32(model, options(2, 64, ops::KvType::kF32));
  const std::vector<float> reference = f32.eval_all(p);
  size_t bytes_f16 = 0;
  for (ops::KvType type : {ops::KvType::kF16, ops::KvType::kQ8}) {
    Context ctx(model, options(2, 64, type));
    const std::vector<float> got = ctx.eval_all(p);
    int agree = 0;
    for (size_t i = 0; i < p.size(); ++i) {
      agree += arch_argmax({got.data() + i * n_vocab, size_t(n_vocab)}) ==
               arch_argmax({reference.data() + i * n_vocab, size_t(n_vocab)});
    }
    EXPECT_GE(agree, static_cast<int>(p.size()) - 1) << ops::kv_type_name(type);
    if (type == ops::KvType::kF16) bytes_f16 = ctx.state().kv_bytes_per_token();
    if (type == ops::KvType::kQ8) {
      // int8 values plus at most one f32 scale per 16-value head row.
      EXPECT_LE(ctx.state().kv_bytes_per_token(), bytes_f16 * 5 / 8);
      EXPECT_GE(ctx.state().kv_bytes_per_token(), bytes_f16 / 2);
    }
  }
}

// Matrices run from their copies (ops/interleaved_weights.h: interleaved, float groups,
// verbatim) give the file layout's logits bit for bit, in prefill, batched teacher forcing and
// decode, at any thread count.
TEST_P(Architecture, InterleavedCopiesGiveTheFileLayoutsLogitsExactly) {
  // f32: a verbatim copy on huge pages (the other types' kernels read the file's layout too).
  for (gguf::TensorType type : {gguf::TensorType::kQ8_0, gguf::TensorType::kQ4_0, gguf::TensorType::kF16,
                                gguf::TensorType::kBF16, gguf::TensorType::kF32}) {
    const fs::path path = fs::temp_directory_path() /
                          ("afm_tiny_il_" + GetParam() + "_" + std::to_string(getpid()) + ".gguf");
    testing::write_tiny_model(GetParam(), path.string(), 3, type);
    ::unsetenv("AFM_INTERLEAVE");
    const std::shared_ptr<const Model> copied = load_model(path.string());
    ::setenv("AFM_INTERLEAVE", "0", 1);
    const std::shared_ptr<const Model> in_place = load_model(path.string());
    ::unsetenv("AFM_INTERLEAVE");
    fs::remove(path);
    EXPECT_EQ(in_place->interleaved_bytes(), 0u);
    if (!ops::InterleavedWeights::enabled()) GTEST_SKIP() << "this CPU's kernels have no interleaved layout";
    EXPECT_GT(copied->interleaved_bytes(), 0u);
    const std::vector<int32_t> p = prompt(copied->hparams().n_vocab, 12);
    for (int threads : {1, 3}) {
      Context a(copied, options(threads, 64)), b(in_place, options(threads, 64));
      ASSERT_EQ(a.eval_all(p), b.eval_all(p)) << gguf::tensor_type_traits(type).name << ", " << threads << " threads";
      for (int32_t t : {5, 9, 2}) {  // decode steps after the prompt
        const std::span<const int32_t> one(&t, 1);
        const std::span<const float> got = a.eval(one);
        const std::vector<float> copy(got.begin(), got.end());
        const std::span<const float> want = b.eval(one);
        ASSERT_TRUE(std::equal(copy.begin(), copy.end(), want.begin(), want.end())) << "decode token " << t;
      }
    }
  }
}

TEST_P(Architecture, OverflowingTheContextIsATypedError) {
  Context ctx(model, options(2, 64));
  const std::vector<int32_t> p = prompt(model->hparams().n_vocab, 65);
  try {
    ctx.eval(p);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("do not fit the context"), std::string::npos);
  }
  EXPECT_EQ(ctx.n_past(), 0);
}

INSTANTIATE_TEST_SUITE_P(AllRegistered, Architecture, ::testing::ValuesIn(registered_archs()),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace afm::model
