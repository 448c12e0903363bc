// Model::forward_batch on every registered architecture, f32 and q8_0 matrices: several
// sequences of different lengths in one pass (prefill chunks, decode tokens, every LogitRows
// kind, sequences joining and leaving, with and without an adapter) give exactly the logits
// each sequence gets from forward() alone, at 1 and 2 threads (afm-server's q8_0 experts,
// which group the tokens of all sequences, within rounding); malformed batches are typed
// errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "adapter_merge.h"
#include "base/error.h"
#include "base/thread_pool.h"
#include "model/registry.h"
#include "model/tiny_models.h"

namespace afm::model {
namespace {

namespace fs = std::filesystem;

std::string batch_temp(const std::string& name) {
  return (fs::temp_directory_path() / ("afm_batch_" + std::to_string(getpid()) + "_" + name))
      .string();
}

// One step of one sequence: tokens and the logits rows wanted.
struct Step {
  std::vector<int32_t> tokens;
  LogitRows rows;
};

int64_t logit_rows(const Step& s) {
  return s.rows == LogitRows::kNone ? 0 : s.rows == LogitRows::kLast ? 1 : s.tokens.size();
}

// A script: steps[k][i] is sequence i's step k (no tokens: the sequence sits this step out).
using Script = std::vector<std::vector<Step>>;

Script make_script(int64_t n_vocab) {
  auto toks = [&](int n, int salt) {
    std::vector<int32_t> t;
    for (int i = 0; i < n; ++i) t.push_back((i * 37 + salt * 101 + 11) % n_vocab);
    return t;
  };
  const LogitRows kAll = LogitRows::kAll, kLast = LogitRows::kLast, kNone = LogitRows::kNone;
  return {
      // prefill of different lengths and logit kinds; sequence 3 joins later
      {{toks(5, 1), kAll}, {toks(13, 2), kLast}, {toks(7, 3), kNone}, {{}, kLast}},
      {{toks(1, 4), kLast}, {toks(1, 5), kLast}, {toks(3, 6), kLast}, {toks(9, 7), kAll}},
      // decode steps; sequence 0 leaves, then returns with a chunk
      {{{}, kLast}, {toks(1, 8), kLast}, {toks(1, 9), kLast}, {toks(1, 10), kLast}},
      {{toks(4, 11), kLast}, {toks(1, 12), kAll}, {toks(1, 13), kLast}, {toks(1, 14), kLast}},
      {{toks(1, 15), kLast}, {toks(2, 16), kAll}, {toks(1, 17), kNone}, {toks(1, 18), kLast}},
      // four decode tokens (a product over 4 rows: the batched kernel path unless told not to)
      {{toks(1, 19), kLast}, {toks(1, 20), kLast}, {toks(1, 21), kLast}, {toks(1, 22), kLast}},
      {{toks(3, 23), kAll}, {toks(1, 24), kLast}, {toks(6, 25), kAll}, {toks(1, 26), kLast}},
  };
}

class BatchForward : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { use(gguf::TensorType::kF32); }
  void use(gguf::TensorType type) {
    path = batch_temp(GetParam() + ".gguf");
    testing::write_tiny_model(GetParam(), path, 1, type);
    model = load_model(path);
    // Exact but for afm-server's experts on a quantised type (see the top of this file).
    tolerance = GetParam() == "afm-server" && type != gguf::TensorType::kF32 ? 1e-3f : 0.0f;
  }
  void TearDown() override {
    fs::remove(path);
    if (!adapter_path.empty()) fs::remove(adapter_path);
  }

  std::shared_ptr<const LoraAdapter> make_adapter() {
    adapter_path = batch_temp(GetParam() + "-lora.gguf");
    cli::RandomAdapterOptions o;
    o.rank = 4;
    o.alpha = 8;
    o.std_b = 0.1f;
    cli::write_random_adapter(model->file(), o, adapter_path);
    return LoraAdapter::load(adapter_path, model->file());
  }

  std::unique_ptr<SequenceState> state(int threads, std::shared_ptr<const LoraAdapter> a) const {
    StateOptions o;
    o.n_ctx = 64;
    o.n_batch = 16;
    o.n_threads = threads;
    o.kv_type = ops::KvType::kF32;
    o.adapter = std::move(a);
    return model->new_state(o);
  }

  // The script run one sequence at a time with forward(): logits[k][i].
  std::vector<std::vector<std::vector<float>>> alone(
      const Script& script, int threads,
      const std::vector<std::shared_ptr<const LoraAdapter>>& adapters) const {
    const int64_t n_vocab = model->hparams().n_vocab;
    ThreadPool pool(threads);
    std::vector<std::unique_ptr<SequenceState>> states;
    for (const auto& a : adapters) states.push_back(state(threads, a));
    std::vector<std::vector<std::vector<float>>> out(script.size());
    for (size_t k = 0; k < script.size(); ++k) {
      for (size_t i = 0; i < states.size(); ++i) {
        const Step& s = script[k][i];
        out[k].emplace_back(logit_rows(s) * n_vocab);
        if (!s.tokens.empty()) model->forward(*states[i], s.tokens, s.rows, out[k][i].data(), pool);
      }
    }
    return out;
  }

  // The script with every step's sequences in one forward_batch.
  std::vector<std::vector<std::vector<float>>> batched(
      const Script& script, int threads,
      const std::vector<std::shared_ptr<const LoraAdapter>>& adapters) const {
    const int64_t n_vocab = model->hparams().n_vocab;
    ThreadPool pool(threads);
    std::vector<std::unique_ptr<SequenceState>> states;
    for (const auto& a : adapters) states.push_back(state(threads, a));
    auto ws = model->new_batch_workspace({64, 64, threads});
    std::vector<std::vector<std::vector<float>>> out(script.size());
    for (size_t k = 0; k < script.size(); ++k) {
      std::vector<BatchItem> items;
      for (size_t i = 0; i < states.size(); ++i) out[k].emplace_back(logit_rows(script[k][i]) * n_vocab);
      for (size_t i = 0; i < states.size(); ++i) {
        const Step& s = script[k][i];
        if (!s.tokens.empty()) items.push_back({states[i].get(), s.tokens, s.rows, out[k][i].data()});
      }
      model->forward_batch(items, *ws, pool);
    }
    return out;
  }

  void expect_same(const std::vector<std::vector<std::vector<float>>>& want,
                   const std::vector<std::vector<std::vector<float>>>& got) const {
    for (size_t k = 0; k < want.size(); ++k) {
      for (size_t i = 0; i < want[k].size(); ++i) {
        ASSERT_EQ(want[k][i].size(), got[k][i].size());
        float scale = 1.0f;
        for (float v : want[k][i]) scale = std::max(scale, std::fabs(v));
        for (size_t v = 0; v < want[k][i].size(); ++v) {
          if (tolerance == 0) {
            ASSERT_EQ(got[k][i][v], want[k][i][v])
                << "step " << k << ", sequence " << i << ", value " << v;
          } else {
            ASSERT_NEAR(got[k][i][v], want[k][i][v], tolerance * scale)
                << "step " << k << ", sequence " << i << ", value " << v;
          }
        }
      }
    }
  }

  std::string path, adapter_path;
  std::shared_ptr<const Model> model;
  float tolerance = 0;
};

TEST_P(BatchForward, EqualsEachSequenceAlone) {
  for (gguf::TensorType type : {gguf::TensorType::kF32, gguf::TensorType::kQ8_0}) {
    use(type);
    const Script script = make_script(model->hparams().n_vocab);
    const std::vector<std::shared_ptr<const LoraAdapter>> none(4);
    for (int threads : {1, 2}) {
      SCOPED_TRACE(std::string(gguf::tensor_type_traits(type).name) + ", " + std::to_string(threads) +
                   " threads");
      expect_same(alone(script, threads, none), batched(script, threads, none));
    }
  }
}

TEST_P(BatchForward, SequencesOnAndOffAnAdapterShareABatch) {
  const Script script = make_script(model->hparams().n_vocab);
  const auto a = make_adapter();
  const std::vector<std::shared_ptr<const LoraAdapter>> mixed{a, nullptr, a, nullptr};
  const auto want = alone(script, 2, mixed);
  const auto plain = alone(script, 2, std::vector<std::shared_ptr<const LoraAdapter>>(4));
  float moved = 0;  // the adapter must matter, or this test shows nothing
  for (size_t v = 0; v < want[1][0].size(); ++v) {
    moved = std::max(moved, std::fabs(want[1][0][v] - plain[1][0][v]));
  }
  EXPECT_GT(moved, 1e-3f);
  expect_same(want, batched(script, 2, mixed));
}

// Speculative verification: LogitRows::kAllExact rows equal one-token passes bit for bit, alone
// and beside another sequence's prefill in one batch, and truncating the rejected tail leaves
// the state as if those tokens had never been evaluated.
TEST_P(BatchForward, ExactRowsEqualOneTokenAtATime) {
  for (gguf::TensorType type : {gguf::TensorType::kF32, gguf::TensorType::kQ8_0}) {
    use(type);
    const int64_t n_vocab = model->hparams().n_vocab;
    const std::vector<int32_t> prompt{3, 9, 4, 1, 7};
    const std::vector<int32_t> draft{5, 2, 8, 6, 1, 3, 2};  // 7 rows: past the per-token size
    const std::vector<int32_t> other(9, 4);
    for (int threads : {1, 2}) {
      SCOPED_TRACE(std::string(gguf::tensor_type_traits(type).name) + ", " +
                   std::to_string(threads) + " threads");
      ThreadPool pool(threads);
      std::vector<float> last(n_vocab);
      // One token at a time: want[i] follows draft[i].
      auto ref = state(threads, nullptr);
      model->forward(*ref, prompt, LogitRows::kLast, last.data(), pool);
      std::vector<float> want(draft.size() * n_vocab);
      for (size_t i = 0; i < draft.size(); ++i) {
        model->forward(*ref, {&draft[i], 1}, LogitRows::kLast, want.data() + i * n_vocab, pool);
      }
      // All at once, alone and in a batch beside a prefill.
      auto solo = state(threads, nullptr);
      model->forward(*solo, prompt, LogitRows::kLast, last.data(), pool);
      std::vector<float> got(want.size());
      model->forward(*solo, draft, LogitRows::kAllExact, got.data(), pool);
      ASSERT_EQ(got, want);
      auto mixed = state(threads, nullptr), neighbour = state(threads, nullptr);
      model->forward(*mixed, prompt, LogitRows::kLast, last.data(), pool);
      std::vector<float> got_batch(want.size()), other_rows(other.size() * n_vocab);
      auto ws = model->new_batch_workspace({64, 64, threads});
      const std::vector<BatchItem> items{
          {neighbour.get(), other, LogitRows::kAll, other_rows.data()},
          {mixed.get(), draft, LogitRows::kAllExact, got_batch.data()}};
      model->forward_batch(items, *ws, pool);
      ASSERT_EQ(got_batch, want);
      // Reject the draft after its second token: the next token continues as if alone.
      solo->truncate(static_cast<int64_t>(prompt.size()) + 2);
      auto fresh = state(threads, nullptr);
      model->forward(*fresh, prompt, LogitRows::kLast, last.data(), pool);
      std::vector<float> two(2 * n_vocab);
      model->forward(*fresh, {draft.data(), 2}, LogitRows::kAllExact, two.data(), pool);
      const int32_t next = 9;
      std::vector<float> after_truncate(n_vocab), after_fresh(n_vocab);
      model->forward(*solo, {&next, 1}, LogitRows::kLast, after_truncate.data(), pool);
      model->forward(*fresh, {&next, 1}, LogitRows::kLast, after_fresh.data(), pool);
      ASSERT_EQ(after_truncate, after_fresh);
    }
  }
}

// A sliding-window ring (afm-server's local layers) that has wrapped many times rolls back a
// verification pass of n_batch tokens exactly; min_exact_truncate says how far back it can go.
TEST_P(BatchForward, RingCachesRollBackOnePassExactly) {
  use(gguf::TensorType::kQ8_0);
  const int64_t n_vocab = model->hparams().n_vocab;
  StateOptions o;
  o.n_ctx = 64;
  o.n_batch = 4;
  o.n_threads = 1;
  ThreadPool pool(1);
  auto spec = model->new_state(o), ref = model->new_state(o);
  std::vector<float> a(n_vocab), b(n_vocab), rows(4 * n_vocab);
  for (int32_t t = 0; t < 40; ++t) {  // far past a window of 3 and a ring of 3 + 4 - 1
    const int32_t token = (t * 7 + 3) % static_cast<int32_t>(n_vocab);
    model->forward(*spec, {&token, 1}, LogitRows::kLast, a.data(), pool);
    model->forward(*ref, {&token, 1}, LogitRows::kLast, b.data(), pool);
  }
  EXPECT_LE(spec->min_exact_truncate(), spec->n_past() - 4);
  if (GetParam() == "afm-server") {
    EXPECT_GT(spec->min_exact_truncate(), 0);
  }
  const std::vector<int32_t> pass{5, 6, 7, 8};
  model->forward(*spec, pass, LogitRows::kAllExact, rows.data(), pool);
  spec->truncate(ref->n_past() + 1);  // keep the first, drop three
  model->forward(*ref, {pass.data(), 1}, LogitRows::kLast, b.data(), pool);
  const int32_t next = 9;
  model->forward(*spec, {&next, 1}, LogitRows::kLast, a.data(), pool);
  model->forward(*ref, {&next, 1}, LogitRows::kLast, b.data(), pool);
  EXPECT_EQ(a, b);
}

TEST_P(BatchForward, MalformedBatchesAreTypedErrors) {
  ThreadPool pool(1);
  auto s1 = state(1, nullptr), s2 = state(1, nullptr);
  auto ws = model->new_batch_workspace({8, 64, 1});
  std::vector<float> logits(model->hparams().n_vocab);
  const std::vector<int32_t> one{1}, many(9, 1), none;
  auto expect_error = [&](std::vector<BatchItem> items, const std::string& words) {
    try {
      model->forward_batch(items, *ws, pool);
      ADD_FAILURE() << "accepted: " << words;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expect_error({}, "at least one item");
  expect_error({{s1.get(), none, LogitRows::kLast, logits.data()}}, "no tokens");
  expect_error({{s1.get(), one, LogitRows::kLast, logits.data()},
                {s1.get(), one, LogitRows::kLast, logits.data()}},
               "the same sequence as item 0");
  expect_error({{s1.get(), many, LogitRows::kNone, nullptr}}, "the workspace holds 8");
  expect_error({{s2.get(), one, LogitRows::kLast, nullptr}}, "no logits buffer");
  EXPECT_EQ(s1->n_past(), 0);  // nothing ran
  EXPECT_EQ(s2->n_past(), 0);
}

INSTANTIATE_TEST_SUITE_P(AllRegistered, BatchForward, ::testing::ValuesIn(registered_archs()),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return s;
                         });

}  // namespace
}  // namespace afm::model
