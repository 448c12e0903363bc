#include "framework/token_evaluator.h"

#include <algorithm>
#include <vector>

namespace afm {

class TokenEvaluator::Target : public VerifyTarget {
 public:
  explicit Target(model::Context& context) : context_(context) {}
  size_t size() const override { return static_cast<size_t>(context_.n_past()); }
  int64_t n_ctx() const override { return context_.n_ctx(); }
  int64_t n_batch() const override { return context_.n_batch(); }
  std::span<const float> append(int32_t token) override {
    return context_.eval(std::span<const int32_t>(&token, 1));
  }
  std::span<const float> extend(std::span<const int32_t> tokens) override {
    const int64_t before = context_.n_past();
    try {
      context_.eval_all_exact(tokens, rows_);
    } catch (...) {  // a chunk may have run
      context_.truncate(before);
      throw;
    }
    return rows_;
  }
  void truncate(size_t n) override { context_.truncate(static_cast<int64_t>(n)); }

 private:
  model::Context& context_;
  std::vector<float> rows_;
};

// Free text: any token may be drafted except those that end generation.
class TokenEvaluator::Guide : public DraftGuide {
 public:
  Guide(std::span<const int32_t> stops, int64_t n_vocab) : stops_(stops), n_vocab_(n_vocab) {}
  std::string forced_bytes() override { return {}; }
  std::vector<int32_t> spell(std::string_view) override { return {}; }
  std::string token_bytes(int32_t) override { return {}; }
  bool allows(int32_t token) override { return token >= 0 && token < n_vocab_ && !ends(token); }
  bool ends(int32_t token) override {
    return std::find(stops_.begin(), stops_.end(), token) != stops_.end();
  }
  void advance(int32_t) override {}

 private:
  std::span<const int32_t> stops_;
  int64_t n_vocab_;
};

TokenEvaluator::TokenEvaluator(model::Context& context, Speculator* speculator,
                               std::span<const int32_t> stop_tokens)
    : target_(std::make_unique<Target>(context)),
      guide_(std::make_unique<Guide>(stop_tokens, context.model().hparams().n_vocab)),
      verifier_(std::make_unique<DraftVerifier>(
          *target_, speculator, static_cast<size_t>(context.model().hparams().n_vocab))) {}

TokenEvaluator::~TokenEvaluator() = default;

std::span<const float> TokenEvaluator::next(int32_t token, std::span<const int32_t> history,
                                            int64_t remaining) {
  return verifier_->next(token, history, remaining, *guide_);
}

}  // namespace afm
