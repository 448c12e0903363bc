// Continuous batching: forward passes submitted by many threads (one per running request) run
// as shared steps of Model::forward_batch, so N sequences decoding at once read every weight
// once per step instead of N times.
//
// Each step takes the next tokens of every waiting sequence: single decode tokens (and
// speculative verification passes, LogitRows::kAllExact, whole when they fit) first, then
// prefill chunks in arrival order until the step's token budget is used (a long prompt is split
// over several steps, so it never stalls the others' next tokens for long). Sequences join and
// leave between steps. Before a step the engine waits, at most `gather_wait`, until every
// sequence that has joined has submitted: a request thread busy sampling its next token (or
// computing its grammar mask) for a moment still shares the step.
//
// Errors: forward() rethrows what the batch's forward pass threw (Error kInvalidArgument for
// tokens that do not fit); the other sequences of that step get the same error.
// Thread safety: forward(), join(), leave() and stats() may be called from any thread; one
// forward() at a time per SequenceState.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "base/thread_pool.h"
#include "model/model.h"

namespace afm::model {

struct BatchEngineOptions {
  int n_threads = 0;             // 0: the physical cores
  int64_t n_ctx = 0;             // the largest context of any sequence it will run (> 0)
  int64_t step_tokens = 256;     // token budget of one step (decode tokens always fit)
  std::chrono::microseconds gather_wait{2000};
};

struct BatchEngineStats {
  uint64_t steps = 0;
  uint64_t tokens = 0;           // evaluated, prefill and decode
  uint64_t sequences = 0;        // summed over steps: sequences / steps = mean batch size
  int64_t max_sequences = 0;     // the largest batch so far
  int64_t waiting = 0;           // submissions not yet finished, now
  int64_t active = 0;            // sequences joined, now
};

class BatchEngine {
 public:
  BatchEngine(std::shared_ptr<const Model> model, const BatchEngineOptions& options);
  ~BatchEngine();
  BatchEngine(const BatchEngine&) = delete;
  BatchEngine& operator=(const BatchEngine&) = delete;

  // As Model::forward on `state` (whose n_threads must be this engine's), run within the
  // engine's steps; returns when every token is evaluated.
  void forward(SequenceState& state, std::span<const int32_t> tokens, LogitRows rows,
               float* logits);
  // A sequence that will submit again soon (a running request) joins; it leaves when done.
  void join();
  void leave();

  int n_threads() const { return pool_.size(); }
  const Model& model() const { return *model_; }
  BatchEngineStats stats() const;

 private:
  struct Job;
  void loop();
  std::vector<Job*> take_step(std::unique_lock<std::mutex>& lock);
  void run_step(const std::vector<Job*>& jobs);

  std::shared_ptr<const Model> model_;
  BatchEngineOptions options_;
  ThreadPool pool_;
  std::unique_ptr<BatchWorkspace> workspace_;
  mutable std::mutex mutex_;
  std::condition_variable submitted_, finished_;
  std::deque<Job*> waiting_;  // arrival order
  int64_t active_ = 0;
  bool stop_ = false;
  BatchEngineStats stats_;
  std::thread thread_;  // last: starts after everything above exists
};

}  // namespace afm::model
