// One sequence's KV cache and the exact tokens it holds, with prefix reuse: sessions and the
// server ask for "the context should now hold these tokens" and only the part after the
// longest common prefix with what it already holds is evaluated.
//
// Errors: prefill() throws afm::Error(kInvalidArgument) "the prompt has N tokens but the
// context holds M" before any work when the tokens do not fit.
// Thread safety: one call at a time per Sequence; Sequences may share one Model.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "model/context.h"

namespace afm {

class Sequence {
 public:
  Sequence(std::shared_ptr<const model::Model> model, const model::ContextOptions& options);

  // Makes the context hold exactly `tokens` (non-empty) and returns the logits after the last
  // one (valid until the next call). At least the last token is evaluated, so there are logits.
  std::span<const float> prefill(std::span<const int32_t> tokens);
  // Appends one token and returns the logits after it. Error when the context is full.
  std::span<const float> append(int32_t token);
  // Appends `tokens` (non-empty) and returns the logits after each one, (tokens.size(),
  // n_vocab) valid until the next call: row i equals what append() of tokens[i] would return
  // after tokens[0..i) bit for bit (Context::eval_all_exact). Speculative decoding verifies
  // draft tokens with it and drops the rejected ones with truncate(); the rows stay valid
  // across truncate() until the next extend(). Error when they do not fit (the sequence is then
  // unchanged).
  std::span<const float> extend(std::span<const int32_t> tokens);
  // Forgets the tokens after the first n (n <= tokens().size(), and the rollback at most
  // n_batch() positions when the model has sliding-window rings: min_exact_truncate).
  void truncate(size_t n);
  int64_t n_batch() const { return context_.n_batch(); }
  // Evaluates `tokens` ahead of time without needing logits (prewarm): a later prefill that
  // starts with them reuses them.
  void warm(std::span<const int32_t> tokens);
  // Forgets everything (the next prefill evaluates all its tokens).
  void clear();

  const std::vector<int32_t>& tokens() const { return tokens_; }
  int64_t n_ctx() const { return context_.n_ctx(); }
  bool full() const { return static_cast<int64_t>(tokens_.size()) >= n_ctx(); }
  // Tokens evaluated by the last prefill() (the rest came from the cache).
  int64_t last_prefill_evaluated() const { return last_evaluated_; }
  // How many leading tokens of `tokens` this sequence already holds.
  size_t shared_prefix(std::span<const int32_t> tokens) const;
  // The LoRA adapter the sequence runs (null: the base) and its scale, fixed at construction.
  const std::shared_ptr<const model::LoraAdapter>& adapter() const { return context_.state().adapter(); }
  float adapter_scale() const { return context_.state().adapter_scale(); }

 private:
  void check_fits(size_t n) const;
  // `shared` leading tokens if the cache can be cut back to them exactly, else 0 (a ring cache
  // that has wrapped past them: model::SequenceState::min_exact_truncate).
  size_t reusable(size_t shared) const;

  model::Context context_;
  std::vector<int32_t> tokens_;  // exactly the tokens whose K/V the context holds
  std::vector<float> rows_;      // extend()'s logits
  int64_t last_evaluated_ = 0;
};

}  // namespace afm
