// LanguageModelSession (include/afm/session.h): the transcript, the tokens of its rendering
// (`committed_`, exactly what the KV cache should hold), which turns of it the model still sees
// (ContextOverflow) and the turn loop with tools.
#include <algorithm>
#include <atomic>

#include "afm/session.h"
#include "base/error.h"
#include "framework/loaded_model.h"
#include "framework/response_decoder.h"
#include "framework/sequence.h"
#include "framework/speculator.h"
#include "framework/session_support.h"
#include "framework/tool_grammar.h"
#include "guided/json_schema_compiler.h"
#include "guided/partial_json.h"

namespace afm {

namespace {
constexpr int kMaxToolRounds = 8;  // then the model must answer without tools
}  // namespace

class LanguageModelSession::Impl {
 public:
  Impl(SystemLanguageModel model, std::vector<std::shared_ptr<Tool>> tools, Transcript transcript)
      : model_(std::move(model)), tools_(std::move(tools)), transcript_(std::move(transcript)) {
    for (const auto& t : tools_) {
      tool_specs_.push_back({t->name(), t->description(), t->arguments_schema().json_schema()});
    }
    loaded_ = model_.loaded();
    if (!model_.is_available()) return;
    tmpl_ = &*loaded_->chat_template();
    while (shown_from_ < transcript_.size() &&
           transcript_[shown_from_].kind == TranscriptEntry::Kind::kInstructions) {
      ++shown_from_;
    }
    committed_ = render_shown(shown_from_);
  }

  // One request: a user turn, then model calls (and tool rounds) until the model answers.
  Response<GeneratedContent> run(const std::string& prompt, const GenerationSchema* schema,
                                 const GenerationOptions& options, bool show_schema,
                                 const std::function<void(const std::string&)>& on_text) {
    Busy busy(responding_);
    require_available();
    if (guardrail_) guardrail_->check_prompt(prompt);
    std::shared_ptr<const guided::Grammar> answer = schema ? compile_answer(*schema) : nullptr;
    std::vector<TranscriptEntry> entries;
    entries.push_back(prompt_entry(prompt, schema, show_schema));
    PromptExtras extras;
    if (schema && show_schema) {
      extras.response_schema = schema->json_schema();
      extras.response_name = schema->name();
      extras.response_description = schema->description();
    }
    // The earlier turns the model sees (changed only on success) and this request's tokens.
    Window window{shown_from_, committed_};
    std::vector<int32_t> turn = encode(tmpl_->render({{"user", prompt}}, true, extras), false);
    Usage usage;
    for (int round = 0;; ++round) {
      const bool tools_allowed = !tool_specs_.empty() && round < kMaxToolRounds;
      fit(window, turn.size(), options);
      std::vector<int32_t> tokens = window.tokens;
      append(tokens, turn);
      DecodeResult r = call_model(tokens, answer, tools_allowed, options, usage, on_text);
      append(turn, r.tokens);
      if (r.finish_reason == "tool_calls") {
        run_tools(r.tool_calls, turn, entries);
        continue;
      }
      if (r.finish_reason == "length" && sequence().full()) {
        throw context_full(sequence().n_ctx(), " (the response filled it)");
      }
      if (answer && !r.answer_complete) {
        throw GenerationError(GenerationErrorKind::kDecodingFailure,
                              "the response reached maximum_response_tokens before the JSON was "
                              "complete");
      }
      if (guardrail_) guardrail_->check_response(r.text);
      append(turn, encode(tmpl_->assistant_suffix(), false));
      entries.push_back(TranscriptEntry{TranscriptEntry::Kind::kResponse, r.text});
      committed_ = std::move(window.tokens);
      append(committed_, turn);
      shown_from_ = window.shown_from;
      transcript_.insert(transcript_.end(), entries.begin(), entries.end());
      GeneratedContent content = answer ? GeneratedContent(parse_json(r.text)) : GeneratedContent(r.text);
      return {std::move(content), std::move(entries), usage};
    }
  }

  void prewarm(const std::string& prefix) {
    Busy busy(responding_);
    require_available();
    std::vector<int32_t> tokens = committed_;
    append(tokens, encode(open_turn(*tmpl_, "user") + prefix, false));
    if (static_cast<int64_t>(tokens.size()) > sequence().n_ctx()) {
      throw context_full(static_cast<int64_t>(tokens.size()));
    }
    sequence().warm(tokens);
  }

  void set_guardrail(std::shared_ptr<Guardrail> g) { guardrail_ = std::move(g); }
  void set_context_overflow(ContextOverflow policy) {
    Busy busy(responding_);
    overflow_ = policy;
  }
  const Transcript& transcript() const { return transcript_; }
  bool responding() const { return responding_.load(); }
  const SystemLanguageModel& model() const { return model_; }

 private:
  // Marks the session busy for one request; a second concurrent request is an error.
  struct Busy {
    explicit Busy(std::atomic<bool>& flag) : flag_(flag) {
      bool expected = false;
      if (!flag_.compare_exchange_strong(expected, true)) {
        throw GenerationError(GenerationErrorKind::kConcurrentRequests,
                              "the session is already responding to a request");
      }
    }
    ~Busy() { flag_.store(false); }
    std::atomic<bool>& flag_;
  };

  void require_available() const {
    if (!model_.is_available()) {
      throw GenerationError(GenerationErrorKind::kUnavailable, model_.availability().reason);
    }
  }

  // The tokens of the instructions and of the transcript's entries from `shown_from` on.
  struct Window {
    size_t shown_from;
    std::vector<int32_t> tokens;
  };

  std::vector<int32_t> render_shown(size_t shown_from) const {
    Transcript shown;
    for (size_t i = 0; i < transcript_.size(); ++i) {
      if (i >= shown_from || transcript_[i].kind == TranscriptEntry::Kind::kInstructions) {
        shown.push_back(transcript_[i]);
      }
    }
    return encode(tmpl_->render(transcript_messages(shown), false, extras_for_tools()), true);
  }

  GenerationError context_full(int64_t needed, const std::string& detail = {}) {
    return GenerationError(GenerationErrorKind::kExceededContextWindowSize,
                           "context full: " + std::to_string(needed) + " of " +
                               std::to_string(sequence().n_ctx()) + " tokens" + detail);
  }

  // Makes the window and `turn_tokens` fit the context, dropping the window's oldest turns
  // when the policy allows (ContextOverflow in session.h); else kExceededContextWindowSize.
  void fit(Window& window, size_t turn_tokens, const GenerationOptions& options) {
    const int64_t n_ctx = sequence().n_ctx();
    auto needed = [&] { return static_cast<int64_t>(window.tokens.size() + turn_tokens); };
    if (overflow_ == ContextOverflow::kDropOldestTurns) {
      const int64_t room = std::max<int64_t>(options.maximum_response_tokens.value_or(n_ctx / 4), 1);
      const int64_t target = std::min(n_ctx / 2, n_ctx - room);
      if (needed() + room > n_ctx) {
        while (needed() > target && window.shown_from < transcript_.size()) {
          window.shown_from = next_turn(window.shown_from);
          window.tokens = render_shown(window.shown_from);
        }
      }
    }
    if (needed() > n_ctx) throw context_full(needed());
  }

  // The index of the turn after the one at `i` (a turn starts with its prompt).
  size_t next_turn(size_t i) const {
    ++i;
    while (i < transcript_.size() && transcript_[i].kind != TranscriptEntry::Kind::kPrompt) ++i;
    return i;
  }

  Sequence& sequence() {
    if (!sequence_) {
      model::ContextOptions c;
      c.n_ctx = model_.options().context_size;
      c.n_threads = model_.options().threads;
      c.adapter = model_.adapter();
      c.adapter_scale = model_.adapter_scale();
      sequence_ = std::make_unique<Sequence>(loaded_->weights(), c);
    }
    return *sequence_;
  }

  // The session's speculator for these options (null: plain decoding); kept between calls so
  // the draft model's cache follows the conversation, rebuilt when the lookup length changes.
  Speculator* speculator(const GenerationOptions& options) {
    SpeculationConfig config;
    config.lookup = options.prompt_lookup;
    config.draft = model_.draft();
    if (!config.enabled()) return nullptr;
    if (!speculator_ || speculator_lookup_ != config.lookup) {
      try {
        check_speculation(config, *loaded_);
      } catch (const Error& e) {
        throw GenerationError(GenerationErrorKind::kDecodingFailure,
                              std::string("options: ") + e.what());
      }
      model::ContextOptions c;
      c.n_ctx = sequence().n_ctx();
      c.n_threads = model_.options().threads;
      speculator_ = std::make_unique<Speculator>(config, c);
      speculator_lookup_ = config.lookup;
    }
    return speculator_.get();
  }

  std::vector<int32_t> encode(const std::string& text, bool at_start) const {
    const tokenizer::Tokenizer& tok = loaded_->tokenizer();
    return tok.encode(text, {.parse_special = true, .add_bos = at_start && tok.add_bos()});
  }
  static void append(std::vector<int32_t>& dst, const std::vector<int32_t>& src) {
    dst.insert(dst.end(), src.begin(), src.end());
  }

  PromptExtras extras_for_tools() const {
    PromptExtras e;
    e.tools = tool_list_json(tool_specs_);
    return e;
  }

  std::shared_ptr<const guided::Grammar> compile_answer(const GenerationSchema& schema) {
    try {
      return grammars_.get_or_compile(schema.json_schema().dump());
    } catch (const Error& e) {
      throw GenerationError(GenerationErrorKind::kUnsupportedGuide, e.what());
    }
  }

  std::shared_ptr<const guided::Grammar> tool_grammar() {
    if (!tool_grammar_) {
      const std::optional<ToolCallFormat> format = tmpl_->tool_call_format();
      try {
        if (!format) tmpl_->render_tool_calls({});  // throws naming the template
        tool_grammar_ = compile_tool_call_grammar(tool_specs_, *format, "", true, &grammars_);
      } catch (const Error& e) {
        throw GenerationError(GenerationErrorKind::kUnsupportedGuide, e.what());
      }
    }
    return tool_grammar_;
  }

  DecodeResult call_model(const std::vector<int32_t>& tokens,
                          std::shared_ptr<const guided::Grammar> answer, bool tools_allowed,
                          const GenerationOptions& options, Usage& usage,
                          const std::function<void(const std::string&)>& on_text) {
    DecodePlan plan;
    plan.answer_grammar = std::move(answer);
    if (tools_allowed) {
      plan.tool_grammar = tool_grammar();
      plan.tool_mode = ToolMode::kAuto;
    }
    plan.max_tokens = options.maximum_response_tokens.value_or(-1);
    plan.speculator = speculator(options);
    sample::Sampler sampler(sampler_config(options));
    ResponseDecoder decoder(*loaded_, std::move(plan), sampler);
    std::span<const float> logits;
    try {
      logits = sequence().prefill(tokens);
    } catch (const Error& e) {
      throw GenerationError(GenerationErrorKind::kExceededContextWindowSize, e.what());
    }
    usage.prompt_tokens += static_cast<int64_t>(tokens.size());
    usage.prefilled_tokens += sequence().last_prefill_evaluated();
    std::string text;
    DecodeResult r = decoder.run(sequence(), logits, [&](std::string_view piece) {
      text += piece;
      if (on_text) on_text(text);
      return true;
    });
    usage.response_tokens += static_cast<int64_t>(r.tokens.size());
    return r;
  }

  void run_tools(const std::vector<ToolCall>& calls, std::vector<int32_t>& tokens,
                 std::vector<TranscriptEntry>& entries) {
    TranscriptEntry call_entry{TranscriptEntry::Kind::kToolCalls};
    for (const ToolCall& c : calls) call_entry.calls.push_back({c.name, c.arguments});
    entries.push_back(call_entry);
    append(tokens, encode(tmpl_->assistant_suffix(), false));
    const std::vector<std::string> outputs = call_tools_concurrently(tools_, calls);
    for (size_t i = 0; i < calls.size(); ++i) {
      TranscriptEntry out{TranscriptEntry::Kind::kToolOutput, outputs[i]};
      out.tool_name = calls[i].name;
      entries.push_back(out);
      append(tokens, encode(tmpl_->render_message({"tool", outputs[i], {}, calls[i].name}), false));
    }
    append(tokens, encode(tmpl_->generation_prompt(), false));
  }

  SystemLanguageModel model_;
  std::shared_ptr<const LoadedModel> loaded_;
  const ChatTemplate* tmpl_ = nullptr;
  std::vector<std::shared_ptr<Tool>> tools_;
  std::vector<ChatToolSpec> tool_specs_;
  Transcript transcript_;
  size_t shown_from_ = 0;  // the first entry after the instructions that the model sees
  std::vector<int32_t> committed_;  // tokens of the rendering of what the model sees
  ContextOverflow overflow_ = ContextOverflow::kError;
  std::unique_ptr<Sequence> sequence_;
  std::unique_ptr<Speculator> speculator_;
  int speculator_lookup_ = -1;
  std::atomic<bool> responding_{false};
  guided::CompiledGrammarCache grammars_{16};
  std::shared_ptr<const guided::Grammar> tool_grammar_;
  std::shared_ptr<Guardrail> guardrail_;
};

LanguageModelSession::LanguageModelSession(SystemLanguageModel model,
                                           std::vector<std::shared_ptr<Tool>> tools,
                                           std::string instructions)
    : LanguageModelSession(std::move(model), std::move(tools),
                           instructions_transcript(std::move(instructions))) {}

LanguageModelSession::LanguageModelSession(SystemLanguageModel model,
                                           std::vector<std::shared_ptr<Tool>> tools,
                                           Transcript transcript)
    : impl_(std::make_unique<Impl>(std::move(model), std::move(tools), std::move(transcript))) {}

LanguageModelSession::~LanguageModelSession() = default;

Response<std::string> LanguageModelSession::respond(const std::string& prompt,
                                                    const GenerationOptions& options) {
  return stream_response(prompt, {}, options);
}

Response<GeneratedContent> LanguageModelSession::respond(const std::string& prompt,
                                                         const GenerationSchema& schema,
                                                         const GenerationOptions& options,
                                                         bool include_schema_in_prompt) {
  return stream_response(prompt, schema, {}, options, include_schema_in_prompt);
}

Response<std::string> LanguageModelSession::stream_response(
    const std::string& prompt, const std::function<void(const std::string&)>& on_snapshot,
    const GenerationOptions& options) {
  Response<GeneratedContent> r = impl_->run(prompt, nullptr, options, false, on_snapshot);
  return {r.content.json().get<std::string>(), std::move(r.entries), r.usage};
}

Response<GeneratedContent> LanguageModelSession::stream_response(
    const std::string& prompt, const GenerationSchema& schema,
    const std::function<void(const GeneratedContent&)>& on_snapshot,
    const GenerationOptions& options, bool include_schema_in_prompt) {
  guided::PartialJsonParser parser;
  size_t fed = 0;
  auto on_text = [&](const std::string& text) {
    if (!on_snapshot) return;
    parser.append(std::string_view(text).substr(fed));
    fed = text.size();
    const guided::PartialJson& p = parser.snapshot();
    on_snapshot(GeneratedContent(p.value, p.complete));
  };
  return impl_->run(prompt, &schema, options, include_schema_in_prompt, on_text);
}

void LanguageModelSession::prewarm(const std::string& prompt_prefix) { impl_->prewarm(prompt_prefix); }
void LanguageModelSession::set_guardrail(std::shared_ptr<Guardrail> guardrail) {
  impl_->set_guardrail(std::move(guardrail));
}
void LanguageModelSession::set_context_overflow(ContextOverflow policy) {
  impl_->set_context_overflow(policy);
}
const Transcript& LanguageModelSession::transcript() const { return impl_->transcript(); }
bool LanguageModelSession::is_responding() const { return impl_->responding(); }
const SystemLanguageModel& LanguageModelSession::model() const { return impl_->model(); }

}  // namespace afm
