#include "framework/token_evaluator.h"

#include <algorithm>

namespace afm {

// Free text: any token may be drafted except those that end generation.
class TokenEvaluator::Guide : public DraftGuide {
 public:
  Guide(std::span<const int32_t> stops, int64_t n_vocab) : stops_(stops), n_vocab_(n_vocab) {}
  std::vector<int32_t> forced() override { return {}; }
  bool allows(int32_t token) override {
    return token >= 0 && token < n_vocab_ &&
           std::find(stops_.begin(), stops_.end(), token) == stops_.end();
  }
  void advance(int32_t) override {}

 private:
  std::span<const int32_t> stops_;
  int64_t n_vocab_;
};

TokenEvaluator::TokenEvaluator(model::Context& context, Speculator* speculator,
                               std::span<const int32_t> stop_tokens)
    : context_(context),
      speculator_(speculator),
      stops_(stop_tokens),
      n_vocab_(static_cast<size_t>(context.model().hparams().n_vocab)),
      held_(static_cast<size_t>(context.n_past())) {}

bool TokenEvaluator::full() const { return static_cast<int64_t>(held_) >= context_.n_ctx(); }

std::span<const float> TokenEvaluator::next(int32_t token, std::span<const int32_t> history,
                                            int64_t remaining) {
  if (next_ < draft_.size() && draft_[next_] == token) {  // the draft's guess: its row is ready
    ++next_;
    ++held_;
    const std::span<const float> row(rows_.data() + next_ * n_vocab_, n_vocab_);
    if (next_ == draft_.size()) close_round();
    return row;
  }
  close_round();
  ++held_;
  if (speculator_) {
    size_t room = static_cast<size_t>(context_.n_ctx()) - held_;
    if (remaining >= 0) room = std::min(room, static_cast<size_t>(remaining));
    Guide guide(stops_, static_cast<int64_t>(n_vocab_));
    draft_ = speculator_->propose(history, room, guide);
  }
  if (draft_.empty()) return context_.eval(std::span<const int32_t>(&token, 1));
  verify_.assign(1, token);
  verify_.insert(verify_.end(), draft_.begin(), draft_.end());
  context_.eval_all_exact(verify_, rows_);
  return {rows_.data(), n_vocab_};
}

void TokenEvaluator::close_round() {
  if (!draft_.empty()) speculator_->record(next_);
  draft_.clear();
  next_ = 0;
  if (context_.n_past() > static_cast<int64_t>(held_)) context_.truncate(static_cast<int64_t>(held_));
}

void TokenEvaluator::reset() {
  draft_.clear();
  next_ = 0;
  held_ = static_cast<size_t>(context_.n_past());
}

}  // namespace afm
