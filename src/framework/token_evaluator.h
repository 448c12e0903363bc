// The forward passes of free-text generation (afm generate, afm chat): each sampled token is
// evaluated alone or, with a Speculator, together with a draft of the next few tokens
// (speculator.h), whose rows then serve the following positions while the samples agree with
// the draft. Logits and the context's final contents are those of one-token passes.
//
// Usage per sampled token: full() (no room: stop), then next(token, history) for the logits
// after it; close_round() when generation ends or before the caller changes the context itself
// (it drops the unverified draft tail, so the context holds exactly the accepted tokens).
// Thread safety: one per generation, single-threaded.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "framework/speculator.h"
#include "model/context.h"

namespace afm {

class TokenEvaluator {
 public:
  // stop_tokens: never drafted (they end generation). speculator: null for plain passes.
  TokenEvaluator(model::Context& context, Speculator* speculator,
                 std::span<const int32_t> stop_tokens);

  // Whether the context has no room for another token (counting accepted tokens only).
  bool full() const;
  // The logits after `token`, which is history.back(); history is every token the context
  // should hold. remaining: tokens that may still be sampled after this one (< 0: unbounded).
  std::span<const float> next(int32_t token, std::span<const int32_t> history, int64_t remaining);
  void close_round();
  // Forgets any open draft and recounts the context (after the caller refilled it).
  void reset();

 private:
  class Guide;
  model::Context& context_;
  Speculator* speculator_;
  std::span<const int32_t> stops_;
  size_t n_vocab_, held_;
  std::vector<int32_t> draft_, verify_;
  std::vector<float> rows_;
  size_t next_ = 0;
};

}  // namespace afm
