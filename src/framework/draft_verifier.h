// The verification side of speculative decoding, shared by chat turns (ResponseDecoder, on a
// Sequence) and free-text generation (TokenEvaluator, on a Context).
//
// A decoder samples a token and asks next() for the logits after it. With no open draft,
// next() asks the Speculator for a draft and evaluates the token and the draft in one exact
// pass (LogitRows::kAllExact: each row bit-identical to a one-token pass), or the token alone
// when nothing was drafted. While the decoder's samples equal the draft, next() serves the
// following rows without running anything; the first disagreement closes the round: the
// unverified tail is truncated away, so the target holds exactly what plain decoding would
// have evaluated (held()).
//
// Contracts: the target holds exactly the decoder's history when next() is called for a token
// that is not the draft's next guess; a verification pass is at most the target's n_batch
// tokens (so a sliding-window ring can roll it back, model::SequenceState::min_exact_truncate);
// drafts never pass the context or the decoder's remaining token budget.
// Thread safety: one per decode loop, single-threaded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "framework/speculator.h"

namespace afm {

// What the verifier evaluates on.
class VerifyTarget {
 public:
  virtual ~VerifyTarget() = default;
  virtual size_t size() const = 0;  // tokens held
  virtual int64_t n_ctx() const = 0;
  virtual int64_t n_batch() const = 0;
  virtual std::span<const float> append(int32_t token) = 0;
  // Rows after each token (Sequence::extend), valid across truncate() until the next extend.
  virtual std::span<const float> extend(std::span<const int32_t> tokens) = 0;
  virtual void truncate(size_t n) = 0;
};

class DraftVerifier {
 public:
  // speculator: null for plain one-token passes.
  DraftVerifier(VerifyTarget& target, Speculator* speculator, size_t n_vocab);

  // Tokens plain decoding would have evaluated by now (the target may hold more mid-round).
  size_t held() const { return held_; }
  bool full() const { return static_cast<int64_t>(held_) >= target_.n_ctx(); }
  // Whether next(token) will serve a verification row (no new draft, so no context needed).
  bool has_row_for(int32_t token) const { return next_ < draft_.size() && draft_[next_] == token; }
  // The logits after `token`. context: held tokens plus `token` (read only when a new draft is
  // made; may be empty without a speculator). remaining: tokens that may still be sampled after
  // this one (< 0: unbounded). guide: what may be drafted (its advances are undone here).
  std::span<const float> next(int32_t token, std::span<const int32_t> context, int64_t remaining,
                              DraftGuide& guide);
  // Ends the open round: reports the accepted count (and the token sampled instead of the
  // next draft token, when there is one) and truncates the unverified tail.
  void close_round(std::optional<int32_t> sampled = std::nullopt);
  // Recounts held() from the target after the caller refilled it; drops any open draft.
  void reset();

 private:
  std::vector<int32_t> propose(std::span<const int32_t> context, int64_t remaining,
                               DraftGuide& guide);

  VerifyTarget& target_;
  Speculator* speculator_;
  size_t n_vocab_, held_;
  std::vector<int32_t> draft_, verify_;
  std::span<const float> rows_;  // row i: the logits after verify_[i]
  size_t next_ = 0;              // the draft token the next sample is compared with
};

}  // namespace afm
