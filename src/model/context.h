// One sequence being evaluated: a shared Model, its SequenceState (KV cache) and a thread
// pool. Long inputs are split into n_batch chunks; inputs that do not fit the context are a
// typed error before any work is done, never a crash.
//
// Thread safety: one call at a time per Context; many Contexts may share one Model.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/thread_pool.h"
#include "model/batch_engine.h"
#include "model/model.h"

namespace afm::model {

struct ContextOptions {
  int64_t n_ctx = 0;      // 0: the model's training context, at most 4096
  int n_threads = 0;      // 0: physical_cores() (base/cpu_count.h)
  int64_t n_batch = 512;  // tokens per forward() call during prefill
  ops::KvType kv_type = ops::KvType::kF16;
  bool full_prefill = false;       // see StateOptions (benchmarks)
  bool sequential_tracks = false;  // see StateOptions (benchmarks)
  std::shared_ptr<const LoraAdapter> adapter;  // see StateOptions; null: the base model
  float adapter_scale = 1.0f;                  // must be finite
  // When set, forward passes run inside this engine's shared batched steps (continuous
  // batching, model/batch_engine.h) on its threads; n_threads is then ignored. The engine
  // must run the same model.
  std::shared_ptr<BatchEngine> engine;
};

// The context a Context gets for `requested` tokens (0: the training context, at most 4096).
// Error(kInvalidArgument) when requested < 0.
int64_t default_n_ctx(const HParams& hp, int64_t requested);

class Context {
 public:
  Context(std::shared_ptr<const Model> model, const ContextOptions& options);

  const Model& model() const { return *model_; }
  int64_t n_past() const { return state_->n_past(); }
  int64_t n_ctx() const { return state_->n_ctx(); }
  int n_threads() const { return engine_ ? engine_->n_threads() : pool_.size(); }
  const SequenceState& state() const { return *state_; }

  // Appends tokens and returns the logits after the last one (n_vocab floats, valid until the
  // next call). Error(kInvalidArgument) when tokens is empty or does not fit the context.
  std::span<const float> eval(std::span<const int32_t> tokens);
  // Appends tokens and returns the logits after every one: (tokens.size(), n_vocab).
  std::vector<float> eval_all(std::span<const int32_t> tokens);
  // As eval_all, each row bit-identical to what eval() of that token alone would return after
  // the ones before it (LogitRows::kAllExact): speculative verification. Writes into `out`
  // (resized to tokens.size() x n_vocab).
  void eval_all_exact(std::span<const int32_t> tokens, std::vector<float>& out);
  // Drops positions >= n so the next eval continues from n (prefix reuse); n must be 0 or at
  // least min_exact_truncate() (see SequenceState).
  void truncate(int64_t n) { state_->truncate(n); }
  int64_t min_exact_truncate() const { return state_->min_exact_truncate(); }
  int64_t n_batch() const { return n_batch_; }

 private:
  void check_fits(size_t n_tokens) const;
  void forward(std::span<const int32_t> tokens, LogitRows rows, float* logits);

  std::shared_ptr<const Model> model_;
  std::shared_ptr<BatchEngine> engine_;
  ThreadPool pool_;
  int64_t n_batch_;
  std::unique_ptr<SequenceState> state_;
  std::vector<float> logits_;
};

}  // namespace afm::model
