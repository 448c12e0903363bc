#include "framework/generation.h"

#include <algorithm>
#include <chrono>

#include "framework/chat_template_kind.h"

namespace afm {
namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Free text: any token may be drafted except those that end generation.
class FreeTextGuide : public DraftGuide {
 public:
  FreeTextGuide(std::span<const int32_t> stops, int64_t n_vocab) : stops_(stops), n_vocab_(n_vocab) {}
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

// The logits after each token of the generation, from single-token passes or, when a
// speculator drafts, from verification rows (see ResponseDecoder, which does the same for chat
// turns). held counts the tokens plain decoding would have evaluated.
class Evaluator {
 public:
  Evaluator(model::Context& context, const GenerationRequest& request)
      : context_(context),
        request_(request),
        guide_(request.stop_tokens, context.model().hparams().n_vocab),
        n_vocab_(static_cast<size_t>(context.model().hparams().n_vocab)),
        held_(static_cast<size_t>(context.n_past())) {}

  bool full() const { return static_cast<int64_t>(held_) >= context_.n_ctx(); }

  // Logits after `token`, the last entry of history; `generated` tokens were sampled so far.
  std::span<const float> next(int32_t token, std::span<const int32_t> history, int64_t generated) {
    if (next_ < draft_.size() && draft_[next_] == token) {
      ++next_;
      ++held_;
      const std::span<const float> row(rows_.data() + next_ * n_vocab_, n_vocab_);
      if (next_ == draft_.size()) close_round();
      return row;
    }
    close_round();
    ++held_;
    if (request_.speculator) {
      size_t room = static_cast<size_t>(context_.n_ctx()) - held_;
      if (request_.max_tokens >= 0) {
        room = std::min(room, static_cast<size_t>(std::max<int64_t>(0, request_.max_tokens - generated)));
      }
      draft_ = request_.speculator->propose(history, room, guide_);
    }
    if (draft_.empty()) return context_.eval(std::span<const int32_t>(&token, 1));
    verify_.assign(1, token);
    verify_.insert(verify_.end(), draft_.begin(), draft_.end());
    context_.eval_all_exact(verify_, rows_);
    return {rows_.data(), n_vocab_};
  }

  // Reports the open draft's accepted count and drops its unverified tail from the context.
  void close_round() {
    if (!draft_.empty()) request_.speculator->record(next_);
    draft_.clear();
    next_ = 0;
    if (context_.n_past() > static_cast<int64_t>(held_)) context_.truncate(static_cast<int64_t>(held_));
  }

 private:
  model::Context& context_;
  const GenerationRequest& request_;
  FreeTextGuide guide_;
  size_t n_vocab_, held_;
  std::vector<int32_t> draft_, verify_;
  std::vector<float> rows_;
  size_t next_ = 0;
};

}  // namespace

std::vector<int32_t> end_of_generation_tokens(const tokenizer::Tokenizer& tokenizer) {
  std::vector<int32_t> ids;
  if (tokenizer.eos_id()) ids.push_back(*tokenizer.eos_id());
  for (const char* name : {"<turn_end>", "<|im_end|>", "<|eot_id|>", "<|end_of_text|>",
                           "<|endoftext|>", "<|eom_id|>"}) {
    const auto id = tokenizer.added_token_id(name);
    if (id && std::find(ids.begin(), ids.end(), *id) == ids.end()) ids.push_back(*id);
  }
  return ids;
}

GenerationStats generate(model::Context& context, sample::Sampler& sampler,
                         const GenerationRequest& request, std::vector<int32_t>& history) {
  GenerationStats stats;
  const int64_t n_vocab = context.model().hparams().n_vocab;
  std::vector<float> logits(n_vocab);
  auto start = std::chrono::steady_clock::now();
  std::span<const float> out = context.eval(request.prompt);
  stats.prefill_ms = ms_since(start);
  stats.prompt_tokens = static_cast<int64_t>(request.prompt.size());
  history.insert(history.end(), request.prompt.begin(), request.prompt.end());
  start = std::chrono::steady_clock::now();
  const SpeculationStats before = request.speculator ? request.speculator->stats() : SpeculationStats{};
  Evaluator evaluator(context, request);
  while (request.max_tokens < 0 || stats.generated < request.max_tokens) {
    std::copy(out.begin(), out.end(), logits.begin());
    const int32_t token = sampler.sample(logits, history);
    ++stats.generated;
    if (std::find(request.stop_tokens.begin(), request.stop_tokens.end(), token) !=
        request.stop_tokens.end()) {
      stats.stopped_by_token = true;
      break;
    }
    history.push_back(token);
    if (request.on_token && !request.on_token(token)) break;
    if (evaluator.full()) break;  // the token is emitted, not evaluated
    out = evaluator.next(token, history, stats.generated);
  }
  evaluator.close_round();
  if (request.speculator) {
    const SpeculationStats& after = request.speculator->stats();
    stats.speculation = {after.rounds - before.rounds, after.proposed - before.proposed,
                         after.accepted - before.accepted, after.forced - before.forced};
  }
  stats.decode_ms = ms_since(start);
  return stats;
}

}  // namespace afm
