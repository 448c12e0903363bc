#include "framework/draft_verifier.h"

#include <algorithm>

namespace afm {
namespace {

// Undoes a guide's provisional advances when a proposal ends, also by an exception.
struct ProposalScope {
  DraftGuide& guide;
  ~ProposalScope() { guide.end_proposal(); }
};

}  // namespace

DraftVerifier::DraftVerifier(VerifyTarget& target, Speculator* speculator, size_t n_vocab)
    : target_(target), speculator_(speculator), n_vocab_(n_vocab), held_(target.size()) {}

std::span<const float> DraftVerifier::next(int32_t token, std::span<const int32_t> context,
                                           int64_t remaining, DraftGuide& guide) {
  if (has_row_for(token)) {  // the draft's guess: its row is ready
    ++next_;
    ++held_;
    const std::span<const float> row = rows_.subspan(next_ * n_vocab_, n_vocab_);
    if (next_ == draft_.size()) close_round();
    return row;
  }
  close_round(token);
  ++held_;
  if (speculator_) draft_ = propose(context, remaining, guide);
  if (draft_.empty()) return target_.append(token);
  verify_.assign(1, token);
  verify_.insert(verify_.end(), draft_.begin(), draft_.end());
  rows_ = target_.extend(verify_);
  return rows_.first(n_vocab_);
}

std::vector<int32_t> DraftVerifier::propose(std::span<const int32_t> context, int64_t remaining,
                                            DraftGuide& guide) {
  // The token and its draft must fit the context, one pass (n_batch) and the token budget.
  size_t room = static_cast<size_t>(target_.n_ctx()) - held_;
  room = std::min(room, static_cast<size_t>(std::max<int64_t>(0, target_.n_batch() - 1)));
  if (remaining >= 0) room = std::min(room, static_cast<size_t>(remaining));
  if (room == 0) return {};
  ProposalScope scope{guide};
  return speculator_->propose(context, room, guide);
}

void DraftVerifier::close_round(std::optional<int32_t> sampled) {
  if (!draft_.empty()) speculator_->record(next_, next_ < draft_.size() ? sampled : std::nullopt);
  draft_.clear();
  next_ = 0;
  if (target_.size() > held_) target_.truncate(held_);
}

void DraftVerifier::reset() {
  draft_.clear();
  next_ = 0;
  held_ = target_.size();
}

}  // namespace afm
