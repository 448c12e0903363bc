#include "server/generation_job.h"

#include <algorithm>
#include <utility>

namespace afm::server {

GenerationJob::GenerationJob(CompleteFn complete, ChatRequest request,
                             std::vector<std::string> stops, const std::atomic<bool>* stopping)
    : has_stops_(!stops.empty()),
      stops_(std::move(stops)),
      stopping_(stopping),
      thread_(&GenerationJob::run, this, std::move(complete), std::move(request)) {}

GenerationJob::~GenerationJob() {
  cancel();
  if (thread_.joinable()) thread_.join();
}

void GenerationJob::deliver(const std::string& text) {
  pending_ += text;
  delivered_ += text;
  while (!queued_logprobs_.empty() && queued_start_ < delivered_.size()) {
    queued_start_ += queued_logprobs_.front().chosen.bytes.size();
    pending_logprobs_.push_back(std::move(queued_logprobs_.front()));
    queued_logprobs_.pop_front();
    ++released_logprobs_;
  }
  if (!text.empty()) cv_.notify_all();
}

bool GenerationJob::on_delta(const ChatDelta& delta) {
  if (cancelled_ || (stopping_ && stopping_->load())) return false;
  if (!delta.logprobs.empty()) {
    std::lock_guard<std::mutex> lock(mutex_);
    queued_logprobs_.insert(queued_logprobs_.end(), delta.logprobs.begin(), delta.logprobs.end());
  }
  std::string safe = stops_.push(delta.text);
  if (!safe.empty()) {
    std::lock_guard<std::mutex> lock(mutex_);
    deliver(safe);
  }
  return !stops_.stopped();
}

void GenerationJob::run(CompleteFn complete, ChatRequest request) {
  ChatResult result;
  std::exception_ptr error;
  try {
    result = complete(
        request, [this](const ChatDelta& d) { return on_delta(d); },
        [this] { return cancelled_.load() || (stopping_ && stopping_->load()); });
  } catch (...) {
    error = std::current_exception();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (!error && has_stops_) {
    deliver(stops_.flush());
    // The answer is what the client was given: cut before the stop sequence.
    result.text = delivered_;
    // Log-probabilities end with the last token that reached the answer the client gets:
    // the entries deliver() released, which came in the result's order.
    result.logprobs.resize(std::min(result.logprobs.size(), released_logprobs_));
    // The engine saw a cancellation; the client sees a normal stop at the sequence (and no
    // end token: the text ended before one).
    if (stops_.stopped()) {
      result.finish_reason = "stop";
      result.end_logprob.reset();
    }
  }
  result_ = std::move(result);
  error_ = error;
  done_ = true;
  cv_.notify_all();
}

GenerationJob::Update GenerationJob::wait(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait_for(lock, timeout, [&] { return done_ || !pending_.empty(); });
  Update u;
  u.text.swap(pending_);
  u.logprobs.swap(pending_logprobs_);
  u.done = done_;
  return u;
}

}  // namespace afm::server
