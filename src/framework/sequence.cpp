#include "framework/sequence.h"

#include <algorithm>

#include "base/error.h"

namespace afm {

Sequence::Sequence(std::shared_ptr<const model::Model> model, const model::ContextOptions& options)
    : context_(std::move(model), options) {}

size_t Sequence::shared_prefix(std::span<const int32_t> tokens) const {
  const size_t n = std::min(tokens.size(), tokens_.size());
  size_t i = 0;
  while (i < n && tokens[i] == tokens_[i]) ++i;
  return i;
}

size_t Sequence::reusable(size_t shared) const {
  if (shared == tokens_.size()) return shared;
  return static_cast<int64_t>(shared) >= context_.min_exact_truncate() ? shared : 0;
}

void Sequence::check_fits(size_t n) const {
  if (static_cast<int64_t>(n) > n_ctx()) {
    throw_error(ErrorCode::kInvalidArgument, "the prompt has " + std::to_string(n) +
                                                 " tokens but the context holds " +
                                                 std::to_string(n_ctx()));
  }
}

std::span<const float> Sequence::prefill(std::span<const int32_t> tokens) {
  AFM_CHECK(!tokens.empty());
  check_fits(tokens.size());
  // Keep at least one token to evaluate so there are logits to sample from.
  const size_t reuse = reusable(std::min(shared_prefix(tokens), tokens.size() - 1));
  context_.truncate(static_cast<int64_t>(reuse));
  tokens_.resize(reuse);
  // The last prompt token is evaluated on its own, as a decode step: batched and single-token
  // matrix products round differently, so its logits would otherwise depend on how much of
  // the prompt the slot had cached, and a seeded request could sample another answer warm
  // than cold. Costs one decode step per request.
  const std::span<const int32_t> rest = tokens.subspan(reuse);
  if (rest.size() > 1) context_.eval(rest.first(rest.size() - 1));
  std::span<const float> logits = context_.eval(rest.last(1));
  tokens_.insert(tokens_.end(), tokens.begin() + static_cast<ptrdiff_t>(reuse), tokens.end());
  last_evaluated_ = static_cast<int64_t>(tokens.size() - reuse);
  return logits;
}

std::span<const float> Sequence::append(int32_t token) {
  check_fits(tokens_.size() + 1);
  std::span<const float> logits = context_.eval(std::span<const int32_t>(&token, 1));
  tokens_.push_back(token);
  return logits;
}

std::span<const float> Sequence::extend(std::span<const int32_t> tokens) {
  AFM_CHECK(!tokens.empty());
  check_fits(tokens_.size() + tokens.size());
  try {
    context_.eval_all_exact(tokens, rows_);
  } catch (...) {  // a chunk may have run: keep the cache equal to tokens_
    context_.truncate(static_cast<int64_t>(tokens_.size()));
    throw;
  }
  tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
  return rows_;
}

void Sequence::truncate(size_t n) {
  AFM_CHECK(n <= tokens_.size());
  context_.truncate(static_cast<int64_t>(n));
  tokens_.resize(n);
}

void Sequence::warm(std::span<const int32_t> tokens) {
  if (tokens.empty()) return;
  check_fits(tokens.size());
  const size_t reuse = reusable(shared_prefix(tokens));
  if (reuse == tokens.size()) return;
  context_.truncate(static_cast<int64_t>(reuse));
  tokens_.resize(reuse);
  context_.eval(tokens.subspan(reuse));
  tokens_.insert(tokens_.end(), tokens.begin() + static_cast<ptrdiff_t>(reuse), tokens.end());
}

void Sequence::clear() {
  context_.truncate(0);
  tokens_.clear();
}

}  // namespace afm
