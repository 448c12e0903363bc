// BatchEngine (continuous batching): sequences decoding on several threads at once share steps
// and get exactly the tokens each gets alone; prompts longer than a step's budget are split;
// a request whose tokens do not fit fails alone; join/leave never leave the engine waiting.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "base/error.h"
#include "model/context.h"
#include "model/registry.h"
#include "model/tiny_models.h"

namespace afm::model {
namespace {

namespace fs = std::filesystem;

int32_t argmax(std::span<const float> v) {
  return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

// Prompt (of a length that depends on `salt`), then `n` greedy tokens.
std::vector<int32_t> greedy(Context& ctx, int salt, int n, int64_t n_vocab) {
  std::vector<int32_t> prompt;
  for (int i = 0; i < 3 + 7 * salt; ++i) prompt.push_back((i * 31 + salt * 17 + 5) % n_vocab);
  std::vector<int32_t> out;
  std::span<const float> logits = ctx.eval(prompt);
  for (int i = 0; i < n; ++i) {
    out.push_back(argmax(logits));
    const std::vector<int32_t> one{out.back()};
    logits = ctx.eval(one);
  }
  return out;
}

class BatchEngineTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    path = (fs::temp_directory_path() /
            ("afm_engine_" + std::to_string(getpid()) + "_" + GetParam() + ".gguf"))
               .string();
    testing::write_tiny_model(GetParam(), path);
    model = load_model(path);
  }
  void TearDown() override { fs::remove(path); }
  ContextOptions options(std::shared_ptr<BatchEngine> engine) const {
    ContextOptions o;
    o.n_ctx = 128;
    o.n_batch = 32;
    o.n_threads = 2;
    o.kv_type = ops::KvType::kF32;
    o.engine = std::move(engine);
    return o;
  }
  std::string path;
  std::shared_ptr<const Model> model;
};

TEST_P(BatchEngineTest, ConcurrentSequencesShareStepsAndMatchDecodingAlone) {
  const int64_t n_vocab = model->hparams().n_vocab;
  constexpr int kSequences = 6, kTokens = 24;
  std::vector<std::vector<int32_t>> alone(kSequences);
  for (int i = 0; i < kSequences; ++i) {
    Context ctx(model, options(nullptr));
    alone[i] = greedy(ctx, i, kTokens, n_vocab);
  }
  // A budget smaller than the longest prompt (38 tokens): prompts are split over steps.
  auto engine = std::make_shared<BatchEngine>(
      model, BatchEngineOptions{2, 128, 16, std::chrono::microseconds(20000)});
  std::vector<std::vector<int32_t>> together(kSequences);
  std::vector<std::thread> threads;
  for (int i = 0; i < kSequences; ++i) engine->join();
  for (int i = 0; i < kSequences; ++i) {
    threads.emplace_back([&, i] {
      Context ctx(model, options(engine));
      together[i] = greedy(ctx, i, kTokens, n_vocab);
      engine->leave();
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kSequences; ++i) EXPECT_EQ(together[i], alone[i]) << "sequence " << i;
  const BatchEngineStats s = engine->stats();
  EXPECT_GT(s.max_sequences, 1);
  EXPECT_LT(s.steps, static_cast<uint64_t>(kSequences * kTokens));  // steps were shared
  EXPECT_EQ(s.active, 0);
  EXPECT_EQ(s.waiting, 0);
}

TEST_P(BatchEngineTest, ARequestThatDoesNotFitFailsAlone) {
  auto engine = std::make_shared<BatchEngine>(model, BatchEngineOptions{1, 128, 64, {}});
  Context good(model, options(engine)), bad(model, options(engine));
  const std::vector<int32_t> prompt(100, 1);
  bad.eval(prompt);
  try {
    bad.eval(prompt);
    ADD_FAILURE() << "200 tokens fit a context of 128";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_EQ(good.eval(prompt).size(), static_cast<size_t>(model->hparams().n_vocab));
}

TEST_P(BatchEngineTest, AContextOnAnotherModelIsRefused) {
  auto engine = std::make_shared<BatchEngine>(model, BatchEngineOptions{1, 128, 64, {}});
  const std::shared_ptr<const Model> other = load_model(path);
  EXPECT_THROW(Context(other, options(engine)), Error);
}

INSTANTIATE_TEST_SUITE_P(AllRegistered, BatchEngineTest, ::testing::ValuesIn(registered_archs()),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return s;
                         });

}  // namespace
}  // namespace afm::model
