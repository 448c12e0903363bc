#include "model/batch_engine.h"

#include <algorithm>
#include <string>

#include "base/cpu_count.h"
#include "base/error.h"

namespace afm::model {

// One forward() call: its tokens are evaluated over one or more steps.
struct BatchEngine::Job {
  SequenceState* state = nullptr;
  std::span<const int32_t> tokens;
  LogitRows rows = LogitRows::kLast;
  float* logits = nullptr;
  size_t done = 0;   // tokens evaluated by earlier steps
  size_t chunk = 0;  // tokens in the step being run
  bool finished = false;
  std::exception_ptr error;
  size_t remaining() const { return tokens.size() - done; }
};

BatchEngine::BatchEngine(std::shared_ptr<const Model> model, const BatchEngineOptions& options)
    : model_(std::move(model)),
      options_(options),
      pool_(options.n_threads > 0 ? options.n_threads : physical_cores()) {
  if (options_.n_ctx <= 0) throw_error(ErrorCode::kInvalidArgument, "batch engine: n_ctx must be > 0");
  if (options_.step_tokens <= 0) {
    throw_error(ErrorCode::kInvalidArgument, "batch engine: the step budget must be > 0 tokens");
  }
  workspace_ = model_->new_batch_workspace({options_.step_tokens, options_.n_ctx, pool_.size()});
  thread_ = std::thread([this] { loop(); });
}

BatchEngine::~BatchEngine() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  submitted_.notify_all();
  thread_.join();
}

void BatchEngine::forward(SequenceState& state, std::span<const int32_t> tokens, LogitRows rows,
                          float* logits) {
  // Checked here, in the caller's thread, so that one bad request never fails a shared step.
  if (tokens.empty()) throw_error(ErrorCode::kInvalidArgument, "no tokens to evaluate");
  if (state.n_past() + static_cast<int64_t>(tokens.size()) > state.n_ctx()) {
    throw_error(ErrorCode::kInvalidArgument,
                std::to_string(tokens.size()) + " tokens do not fit the context: " +
                    std::to_string(state.n_past()) + " of " + std::to_string(state.n_ctx()) +
                    " positions are in use");
  }
  if (state.n_ctx() > options_.n_ctx) {
    throw_error(ErrorCode::kInvalidArgument,
                "a context of " + std::to_string(state.n_ctx()) +
                    " positions exceeds the batch engine's " + std::to_string(options_.n_ctx));
  }
  if (rows != LogitRows::kNone && logits == nullptr) {
    throw_error(ErrorCode::kInvalidArgument, "no logits buffer");
  }
  Job job;
  job.state = &state;
  job.tokens = tokens;
  job.rows = rows;
  job.logits = logits;
  std::unique_lock<std::mutex> lock(mutex_);
  waiting_.push_back(&job);
  submitted_.notify_all();
  finished_.wait(lock, [&] { return job.finished; });
  if (job.error) std::rethrow_exception(job.error);
}

void BatchEngine::join() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++active_;
}

void BatchEngine::leave() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    active_ = std::max<int64_t>(0, active_ - 1);
  }
  submitted_.notify_all();  // the engine may be waiting for this sequence
}

BatchEngineStats BatchEngine::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  BatchEngineStats s = stats_;
  s.waiting = static_cast<int64_t>(waiting_.size());
  s.active = active_;
  return s;
}

void BatchEngine::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    submitted_.wait(lock, [&] { return stop_ || !waiting_.empty(); });
    if (stop_) break;
    // Give every joined sequence a moment to submit its next token, so they share the step.
    submitted_.wait_for(lock, options_.gather_wait, [&] {
      return stop_ || static_cast<int64_t>(waiting_.size()) >= active_;
    });
    if (stop_) break;
    const std::vector<Job*> step = take_step(lock);
    lock.unlock();
    run_step(step);
    lock.lock();
    int64_t tokens = 0;
    for (Job* j : step) {
      tokens += static_cast<int64_t>(j->chunk);
      j->done += j->chunk;
      if (j->error || j->remaining() == 0) {
        j->finished = true;
        waiting_.erase(std::find(waiting_.begin(), waiting_.end(), j));
      }
    }
    ++stats_.steps;
    stats_.tokens += static_cast<uint64_t>(tokens);
    stats_.sequences += step.size();
    stats_.max_sequences = std::max<int64_t>(stats_.max_sequences, static_cast<int64_t>(step.size()));
    finished_.notify_all();
  }
  for (Job* j : waiting_) {  // only when the engine is destroyed under running requests
    j->error = std::make_exception_ptr(Error(ErrorCode::kInternal, "the batch engine stopped"));
    j->finished = true;
  }
  waiting_.clear();
  finished_.notify_all();
}

std::vector<BatchEngine::Job*> BatchEngine::take_step(std::unique_lock<std::mutex>&) {
  std::vector<Job*> step;
  int64_t budget = options_.step_tokens;
  // Decode tokens first (each request's next token, or its token and a speculative draft to
  // verify, whole when it fits), then prefill chunks in arrival order.
  const auto is_decode = [](const Job* j) {
    return j->remaining() == 1 || j->rows == LogitRows::kAllExact;
  };
  for (Job* j : waiting_) {
    if (budget == 0) break;
    const auto n = static_cast<int64_t>(j->remaining());
    if (is_decode(j) && n <= budget) {
      j->chunk = static_cast<size_t>(n);
      budget -= n;
      step.push_back(j);
    }
  }
  for (Job* j : waiting_) {
    if (budget == 0) break;
    if (j->remaining() > 1 && std::find(step.begin(), step.end(), j) == step.end()) {
      j->chunk = static_cast<size_t>(
          std::min({static_cast<int64_t>(j->remaining()), budget, j->state->n_batch()}));
      budget -= static_cast<int64_t>(j->chunk);
      step.push_back(j);
    }
  }
  return step;
}

void BatchEngine::run_step(const std::vector<Job*>& jobs) {
  const int64_t n_vocab = model_->hparams().n_vocab;
  std::vector<BatchItem> items;
  items.reserve(jobs.size());
  for (Job* j : jobs) {
    const bool last = j->chunk == j->remaining();
    BatchItem item{j->state, j->tokens.subspan(j->done, j->chunk), LogitRows::kNone, nullptr};
    if (j->rows == LogitRows::kAll || j->rows == LogitRows::kAllExact) {
      item.rows = j->rows;  // every chunk's rows, each at its place
      item.logits = j->logits + static_cast<int64_t>(j->done) * n_vocab;
    } else if (last) {
      item.rows = j->rows;
      item.logits = j->logits;
    }
    items.push_back(item);
  }
  try {
    model_->forward_batch(items, *workspace_, pool_);
  } catch (...) {
    for (Job* j : jobs) j->error = std::current_exception();
  }
}

}  // namespace afm::model
