#include "framework/response_decoder.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>

#include "base/error.h"
#include "framework/draft_verifier.h"
#include "framework/generation.h"
#include "framework/tool_grammar.h"
#include "guided/token_matcher.h"
#include "tokenizer/tokenizer.h"

namespace afm {
namespace {

int32_t required_token(const tokenizer::Tokenizer& tok, const std::string& text, const char* why) {
  const std::optional<int32_t> id = tok.added_token_id(text);
  if (!id) {
    throw_error(ErrorCode::kUnsupported,
                "the model's tokenizer has no " + text + " token (needed for " + why + ")");
  }
  return *id;
}

// A Sequence as the target of draft verification.
class SequenceTarget : public VerifyTarget {
 public:
  explicit SequenceTarget(Sequence& seq) : seq_(seq) {}
  size_t size() const override { return seq_.tokens().size(); }
  int64_t n_ctx() const override { return seq_.n_ctx(); }
  int64_t n_batch() const override { return seq_.n_batch(); }
  std::span<const float> append(int32_t token) override { return seq_.append(token); }
  std::span<const float> extend(std::span<const int32_t> tokens) override {
    return seq_.extend(tokens);
  }
  void truncate(size_t n) override { seq_.truncate(n); }

 private:
  Sequence& seq_;
};

}  // namespace

// The state of one turn; see the header for the state machine.
class ResponseDecoder::Turn : public DraftGuide {
 public:
  Turn(const LoadedModel& model, const DecodePlan& plan)
      : model_(model), plan_(plan), tok_(model.tokenizer()), text_decoder_(tok_) {
    stop_ids_ = end_of_generation_tokens(tok_);
    mask_ = std::make_unique<bool[]>(static_cast<size_t>(tok_.vocab_size()));
    n_vocab_ = static_cast<size_t>(model.weights()->hparams().n_vocab);
    // Without a chat template only plain text is decoded (a text prompt): it ends at stop_ids_.
    if (!model.chat_template()) {
      AFM_CHECK(!plan.answer_grammar && !plan.tool_grammar);
      return;
    }
    const ChatTemplate& tmpl = *model.chat_template();
    end_of_turn_ = required_token(tok_, tmpl.end_of_turn_tokens().front(), "the end of a turn");
    if (plan.answer_grammar) {
      answer_.emplace(plan.answer_grammar, model.vocabulary(end_of_turn_));
    }
    if (plan.tool_grammar && plan.tool_mode != ToolMode::kNone) {
      format_ = *tmpl.tool_call_format();
      tool_start_ = required_token(tok_, format_.start_token, "tool calls");
      tool_end_ = required_token(tok_, format_.end_token, "tool calls");
      if (!format_.array_of_calls && plan.parallel_tool_calls) {
        const std::vector<int32_t> between = tok_.encode(format_.between);
        if (between.size() == 1) between_token_ = between[0];
      }
    } else if (const auto f = tmpl.tool_call_format()) {
      tool_start_ = tok_.added_token_id(f->start_token).value_or(-1);  // to forbid it
    }
  }

  DecodeResult run(Sequence& seq, std::span<const float> logits,
                   const std::function<bool(std::string_view)>& on_text,
                   const std::function<bool()>& keep_going, sample::Sampler& sampler) {
    on_text_ = &on_text;
    SequenceTarget target(seq);
    DraftVerifier verifier(target, plan_.speculator, n_vocab_);
    verifier_ = &verifier;
    const SpeculationStats before =
        plan_.speculator ? plan_.speculator->stats() : SpeculationStats{};
    std::vector<float> buf(logits.size());
    if (plan_.tool_mode == ToolMode::kRequired && tools_enabled()) {
      if (!emit(tool_start_, seq, logits)) return std::move(result_);
    }
    while (!done_) {
      if (keep_going && !keep_going()) {
        finish("cancelled");
        break;
      }
      if (plan_.max_tokens >= 0 && static_cast<int64_t>(generated_) >= plan_.max_tokens) {
        finish("length");
        break;
      }
      std::copy(logits.begin(), logits.end(), buf.begin());
      const auto mask_start = std::chrono::steady_clock::now();
      const bool masked = fill_mask(buf);
      result_.mask_ms += std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - mask_start).count();
      const std::span<const int32_t> history(seq.tokens().data(), verifier.held());
      const int32_t token = sampler.sample(
          buf, history, masked ? std::span<const bool>(mask_.get(), tok_.vocab_size())
                               : std::span<const bool>());
      if (plan_.logprobs_top >= 0 && is_answer_text(token)) {
        result_.answer_logprobs.push_back(sample::logprobs_at(logits, token, plan_.logprobs_top));
        if (plan_.on_logprob) plan_.on_logprob(result_.answer_logprobs.back());
      } else if (plan_.logprobs_top >= 0 && ends_answer(token)) {
        result_.end_logprob = sample::logprobs_at(logits, token, plan_.logprobs_top);
      }
      if (!emit(token, seq, logits)) break;
    }
    verifier.close_round();
    verifier_ = nullptr;
    if (plan_.speculator) result_.speculation = plan_.speculator->stats() - before;
    return std::move(result_);
  }

  // ---- DraftGuide: what the grammar allows at the next drafted position ----

  std::string forced_bytes() override {
    guided::TokenMatcher* m = draft_matcher();
    constexpr size_t kForcedBytes = 64;
    return m ? m->forced_bytes(kForcedBytes) : std::string();
  }

  std::vector<int32_t> spell(std::string_view bytes) override {
    return tok_.encode(bytes, {.parse_special = false, .add_bos = false});
  }

  std::string token_bytes(int32_t token) override { return tok_.token_bytes(token); }

  bool allows(int32_t token) override {
    if (!drafting_state() || token < 0 || token >= tok_.vocab_size() || ends(token)) return false;
    guided::TokenMatcher* m = draft_matcher();
    if (m == nullptr) return true;
    const std::vector<uint32_t>& words = draft_mask(*m);
    return (words[static_cast<size_t>(token) / 32] >> (token % 32)) & 1;
  }

  // Tokens that end the answer, a tool block or the turn.
  bool ends(int32_t token) override {
    return token == end_of_turn_ || token == tool_start_ || token == tool_end_ ||
           std::find(stop_ids_.begin(), stop_ids_.end(), token) != stop_ids_.end();
  }

  void advance(int32_t token) override {
    if (guided::TokenMatcher* m = draft_matcher()) {
      AFM_CHECK(m->accept_token(token));
      ++provisional_;
    }
    draft_words_valid_ = false;
  }

  void end_proposal() override {
    if (guided::TokenMatcher* m = draft_matcher()) m->rollback(provisional_);
    provisional_ = 0;
    draft_words_valid_ = false;
  }

 private:
  enum class State { kAnswer, kToolBody, kAfterTool, kAfterBetween };

  bool tools_enabled() const { return plan_.tool_grammar && plan_.tool_mode != ToolMode::kNone; }

  // Whether `token`, sampled now, becomes part of the answer text (on_answer_token's cases).
  bool is_answer_text(int32_t token) const {
    if (state_ != State::kAnswer) return false;
    if (tools_enabled() && token == tool_start_) return false;
    if (answer_) return token != end_of_turn_;
    return std::find(stop_ids_.begin(), stop_ids_.end(), token) == stop_ids_.end();
  }

  // Whether `token`, sampled now, ends the answer text (the end of the turn or of the text).
  bool ends_answer(int32_t token) const {
    if (state_ != State::kAnswer) return false;
    if (answer_) return token == end_of_turn_;
    return std::find(stop_ids_.begin(), stop_ids_.end(), token) != stop_ids_.end();
  }

  // Writes the allowed set into mask_ and returns true, or adjusts logits and returns false
  // when every token but a few is allowed (free text).
  bool fill_mask(std::span<float> logits) {
    switch (state_) {
      case State::kToolBody:
        return from_matcher(*tool_);
      case State::kAfterTool:
        return only({end_of_turn_, between_token_});
      case State::kAfterBetween:
        return only({tool_start_});
      case State::kAnswer:
        break;
    }
    const bool may_call = tools_enabled() && (!answer_ || generated_ == 0);
    if (answer_) {
      from_matcher(*answer_);
      if (may_call) mask_[static_cast<size_t>(tool_start_)] = true;
      return true;
    }
    if (!may_call && tool_start_ >= 0 && static_cast<size_t>(tool_start_) < logits.size()) {
      logits[static_cast<size_t>(tool_start_)] = -std::numeric_limits<float>::infinity();
    }
    return false;
  }

  bool from_matcher(guided::TokenMatcher& m) {
    words_.resize(m.vocabulary().mask_words());
    m.fill_next_token_mask(words_);
    for (size_t i = 0; i < static_cast<size_t>(tok_.vocab_size()); ++i) {
      mask_[i] = (words_[i / 32] >> (i % 32)) & 1;
    }
    return true;
  }

  bool only(std::initializer_list<int32_t> ids) {
    std::fill(mask_.get(), mask_.get() + tok_.vocab_size(), false);
    for (int32_t id : ids) {
      if (id >= 0) mask_[static_cast<size_t>(id)] = true;
    }
    return true;
  }

  // Handles one chosen token; returns false when the turn is over.
  bool emit(int32_t token, Sequence& seq, std::span<const float>& logits) {
    ++generated_;
    switch (state_) {
      case State::kAnswer: on_answer_token(token); break;
      case State::kToolBody: on_tool_token(token); break;
      case State::kAfterTool:
        if (token == end_of_turn_) return finish_bool("tool_calls");
        state_ = State::kAfterBetween;
        break;
      case State::kAfterBetween:
        start_tool_block();
        break;
    }
    if (done_) return false;
    result_.tokens.push_back(token);
    if (finish_after_token_) return finish_bool(finish_after_token_);
    return evaluate(token, seq, logits);
  }

  // Makes `logits` the target's logits after `token` (DraftVerifier: from a verification row
  // when the token is the draft's guess, else a new pass that may carry a new draft).
  bool evaluate(int32_t token, Sequence& seq, std::span<const float>& logits) {
    if (verifier_->full()) return finish_bool("length");
    std::span<const int32_t> context;
    if (plan_.speculator && !verifier_->has_row_for(token)) {  // for the drafters
      context_.assign(seq.tokens().begin(),
                      seq.tokens().begin() + static_cast<ptrdiff_t>(verifier_->held()));
      context_.push_back(token);
      context = context_;
    }
    const int64_t remaining =
        plan_.max_tokens < 0 ? -1 : plan_.max_tokens - static_cast<int64_t>(generated_);
    logits = verifier_->next(token, context, remaining, *this);
    return true;
  }

  bool drafting_state() const { return state_ == State::kAnswer || state_ == State::kToolBody; }

  // The matcher that confines the next token (null: free text, or not a drafting state).
  guided::TokenMatcher* draft_matcher() {
    if (state_ == State::kToolBody) return &*tool_;
    if (state_ == State::kAnswer && answer_) return &*answer_;
    return nullptr;
  }

  const std::vector<uint32_t>& draft_mask(guided::TokenMatcher& m) {
    if (!draft_words_valid_) {
      draft_words_.resize(m.vocabulary().mask_words());
      m.fill_next_token_mask(draft_words_);
      draft_words_valid_ = true;
    }
    return draft_words_;
  }


  void on_answer_token(int32_t token) {
    if (tools_enabled() && token == tool_start_) return start_tool_block();
    if (answer_) {
      if (token == end_of_turn_) return finish("stop");
      AFM_CHECK(answer_->accept_token(token));
    } else if (std::find(stop_ids_.begin(), stop_ids_.end(), token) != stop_ids_.end()) {
      return finish("stop");
    }
    const std::string piece = text_decoder_.push(token);
    result_.text += piece;
    if (!piece.empty() && *on_text_ && !(*on_text_)(piece)) finish("cancelled");
  }

  void start_tool_block() {
    state_ = State::kToolBody;
    tool_.emplace(plan_.tool_grammar, model_.vocabulary(tool_end_));
    body_.clear();
  }

  void on_tool_token(int32_t token) {
    AFM_CHECK(tool_->accept_token(token));
    if (token != tool_end_) {
      body_ += tok_.token_bytes(token);
      return;
    }
    for (ToolCall& c : parse_tool_call_body(body_, format_)) {
      result_.tool_calls.push_back(std::move(c));
    }
    const bool another = !format_.array_of_calls && plan_.parallel_tool_calls && between_token_ >= 0;
    if (another) {
      state_ = State::kAfterTool;
    } else {
      finish_after_token_ = "tool_calls";
    }
  }

  void finish(const char* reason) {
    if (!done_) {
      done_ = true;
      const std::string tail = text_decoder_.flush();
      result_.text += tail;
      if (!tail.empty() && *on_text_) (*on_text_)(tail);
      result_.finish_reason = reason;
      result_.answer_complete = answer_ && answer_->is_complete();
      if (state_ == State::kToolBody && result_.finish_reason != "tool_calls") {
        result_.tool_calls.clear();  // a cut-off block is not a call
      }
    }
  }
  bool finish_bool(const char* reason) {
    finish(reason);
    return false;
  }

  const LoadedModel& model_;
  const DecodePlan& plan_;
  const tokenizer::Tokenizer& tok_;
  tokenizer::IncrementalDecoder text_decoder_;
  const std::function<bool(std::string_view)>* on_text_ = nullptr;
  ToolCallFormat format_;
  int32_t end_of_turn_ = -1, tool_start_ = -1, tool_end_ = -1, between_token_ = -1;
  std::vector<int32_t> stop_ids_;
  std::optional<guided::TokenMatcher> answer_, tool_;
  std::unique_ptr<bool[]> mask_;
  std::vector<uint32_t> words_;
  std::string body_;
  State state_ = State::kAnswer;
  size_t generated_ = 0;
  const char* finish_after_token_ = nullptr;
  bool done_ = false;
  DecodeResult result_;
  // Speculative decoding: the draft being verified, the verification logits (row i follows
  // the i-th verified token), the next draft token to compare, provisional matcher advances.
  size_t n_vocab_ = 0;
  DraftVerifier* verifier_ = nullptr;  // run()'s, while it runs
  std::vector<int32_t> context_;       // drafters' view: held tokens + the one just sampled
  size_t provisional_ = 0;             // matcher advances of the proposal being made
  std::vector<uint32_t> draft_words_;
  bool draft_words_valid_ = false;
};

ResponseDecoder::ResponseDecoder(const LoadedModel& model, DecodePlan plan,
                                 sample::Sampler& sampler)
    : model_(model), plan_(std::move(plan)), sampler_(sampler) {
  // Plain text decodes without a template; a schema or tools need its tokens.
  if (!model.chat_template() && (plan_.answer_grammar || plan_.tool_grammar)) {
    throw_error(ErrorCode::kUnsupported, model.unavailable_reason());
  }
}

ResponseDecoder::~ResponseDecoder() = default;

DecodeResult ResponseDecoder::run(Sequence& sequence, std::span<const float> logits,
                                  const std::function<bool(std::string_view)>& on_text,
                                  const std::function<bool()>& keep_going) {
  Turn turn(model_, plan_);
  return turn.run(sequence, logits, on_text, keep_going, sampler_);
}

}  // namespace afm
