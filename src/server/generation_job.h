// One chat completion running on its own thread, so the HTTP layer can
//   - choose the status code after the engine's first event (request errors come before any
//     token, so a stream that has begun never needs a 4xx),
//   - stream text as it is produced, and
//   - cancel the generation when the client goes away or the server stops.
// Stop sequences are applied here: text past a match is never delivered and generation is
// cancelled, with finish_reason "stop".
//
// Ownership: the job copies the request and the completion function; whatever that function
// refers to (the ChatService) must outlive the job. The destructor cancels and joins, which
// returns once the engine polls the cancellation (before each token, or while queued) or finishes.
// Thread safety: wait(), cancel() and the accessors may be called from any one thread while the
// job runs; result() and error() only after wait() reported done.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "framework/chat_service.h"
#include "server/stop_sequences.h"

namespace afm::server {

using DeltaFn = std::function<bool(const ChatDelta&)>;
using CancelledFn = std::function<bool()>;
// ChatService::complete: the request, text deltas (false cancels), and a cancellation poll.
using CompleteFn = std::function<ChatResult(const ChatRequest&, const DeltaFn&, const CancelledFn&)>;

class GenerationJob {
 public:
  // `stopping` (may be null) cancels the job once it reads true: server shutdown.
  GenerationJob(CompleteFn complete, ChatRequest request, std::vector<std::string> stops,
                const std::atomic<bool>* stopping);
  ~GenerationJob();
  GenerationJob(const GenerationJob&) = delete;
  GenerationJob& operator=(const GenerationJob&) = delete;

  struct Update {
    std::string text;   // produced since the previous wait()
    // Log-probabilities of the tokens that text begins (ChatRequest::logprobs_top >= 0): an
    // entry is passed on with the delivered text that covers its first byte, so a token held
    // back (part of a character, a possible stop sequence) waits with its text.
    std::vector<ChatLogprob> logprobs;
    bool done = false;  // the job has finished (result() or error() is set)
  };
  // Returns as soon as there is new text or the job is done, or after `timeout`.
  Update wait(std::chrono::milliseconds timeout);

  // The engine stops before its next token (finish_reason "cancelled").
  void cancel() { cancelled_ = true; }
  bool cancelled() const { return cancelled_; }

  // The result with text cut at a stop sequence; valid once done and error() is null.
  const ChatResult& result() const { return result_; }
  std::exception_ptr error() const { return error_; }

 private:
  bool on_delta(const ChatDelta& delta);
  void run(CompleteFn complete, ChatRequest request);
  void deliver(const std::string& text);  // with mutex_ held

  const bool has_stops_;
  StopScanner stops_;  // used by the job thread only
  const std::atomic<bool>* stopping_;
  std::atomic<bool> cancelled_{false};
  std::mutex mutex_;
  std::condition_variable cv_;
  std::string pending_;    // text not yet taken by wait()
  std::string delivered_;  // all text passed on (the answer when stop sequences are set)
  std::deque<ChatLogprob> queued_logprobs_;    // entries whose text is not delivered yet
  size_t queued_start_ = 0;                    // byte offset of the first queued entry
  std::vector<ChatLogprob> pending_logprobs_;  // delivered entries not yet taken by wait()
  size_t released_logprobs_ = 0;               // entries delivered so far
  bool done_ = false;
  ChatResult result_;
  std::exception_ptr error_;
  std::thread thread_;  // last: starts after every member above is ready
};

}  // namespace afm::server
