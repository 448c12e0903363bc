// The forward passes of free-text generation (afm generate, afm chat) on a Context: each
// sampled token is evaluated alone or, with a Speculator, with a draft of the next few tokens
// verified in the same pass (draft_verifier.h). Logits and the context's final contents are
// those of one-token passes.
//
// Usage per sampled token: full() (no room: stop), then next(token, history) for the logits
// after it; close_round() when generation ends or before the caller changes the context itself.
// Thread safety: one per generation, single-threaded.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "framework/draft_verifier.h"
#include "framework/speculator.h"
#include "model/context.h"

namespace afm {

class TokenEvaluator {
 public:
  // stop_tokens: never drafted (they end generation). speculator: null for plain passes.
  TokenEvaluator(model::Context& context, Speculator* speculator,
                 std::span<const int32_t> stop_tokens);
  ~TokenEvaluator();

  bool full() const { return verifier_->full(); }
  // The logits after `token`, which is history.back(); history is every token the context
  // should hold. remaining: tokens that may still be sampled after this one (< 0: unbounded).
  std::span<const float> next(int32_t token, std::span<const int32_t> history, int64_t remaining);
  void close_round() { verifier_->close_round(); }
  // Forgets any open draft and recounts the context (after the caller refilled it).
  void reset() { verifier_->reset(); }

 private:
  class Target;
  class Guide;
  std::unique_ptr<Target> target_;
  std::unique_ptr<Guide> guide_;
  std::unique_ptr<DraftVerifier> verifier_;
};

}  // namespace afm
