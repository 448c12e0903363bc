#include "framework/chat_service.h"

#include "guided/mask_cache.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <cstdio>
#include <limits>
#include <mutex>
#include <optional>
#include <utility>

#include "base/cpu_count.h"
#include "base/error.h"
#include "framework/response_decoder.h"
#include "framework/sequence.h"
#include "guided/json_schema_compiler.h"
#include "guided/mask_cache.h"

namespace afm {
namespace {

ToolMode tool_mode(const ChatRequest& r) {
  if (r.tools.empty()) return ToolMode::kNone;
  switch (r.tool_choice) {
    case ToolChoice::kAuto: return ToolMode::kAuto;
    case ToolChoice::kNone: return ToolMode::kNone;
    case ToolChoice::kRequired:
    case ToolChoice::kNamed: return ToolMode::kRequired;
  }
  return ToolMode::kNone;
}

void check_roles(const std::vector<ChatMessage>& messages) {
  if (messages.empty()) throw_error(ErrorCode::kInvalidArgument, "messages must not be empty");
  for (size_t i = 0; i < messages.size(); ++i) {
    const std::string& r = messages[i].role;
    if (r != "system" && r != "user" && r != "assistant" && r != "tool") {
      throw_error(ErrorCode::kInvalidArgument,
                  "messages[" + std::to_string(i) + "].role: unknown role '" + r + "'");
    }
  }
}

}  // namespace

// FIFO admission to a fixed set of sequences; a request takes the free sequence that already
// holds the longest prefix of its tokens.
class ChatService::Slots {
 public:
  Slots(const LoadedModel& model, const ChatServiceOptions& o) : weights_(model.weights()) {
    const int n_slots = std::max(1, o.n_slots);
    options_.n_ctx = o.n_ctx;
    if (o.batching) {
      // One pool for every slot: the running requests' tokens share each forward pass.
      model::BatchEngineOptions b;
      b.n_threads = o.n_threads > 0 ? o.n_threads : physical_cores();
      b.n_ctx = model::default_n_ctx(weights_->hparams(), o.n_ctx);
      b.step_tokens = o.step_tokens;
      engine_ = std::make_shared<model::BatchEngine>(weights_, b);
      options_.engine = engine_;
    } else {
      // Slots run at once: sharing the cores keeps their pools from oversubscribing them.
      options_.n_threads = o.n_threads > 0 ? o.n_threads : std::max(1, physical_cores() / n_slots);
    }
    default_adapter_ = {o.adapter, o.adapter_scale};
    if (o.speculation.enabled()) make_draft_context(o);
    for (int i = 0; i < n_slots; ++i) {
      sequences_.push_back(make_sequence(default_adapter_));
      busy_.push_back(false);
      last_used_.push_back(0);
      if (o.speculation.enabled()) {
        speculators_.push_back(std::make_unique<Speculator>(o.speculation, draft_options_));
        if (engine_ && o.speculation.draft) {  // drafting requests do not hold the steps up
          speculators_.back()->set_draft_hooks([e = engine_] { e->leave(); },
                                               [e = engine_] { e->join(); });
        }
      }
    }
    n_ctx_ = sequences_.front()->n_ctx();
  }

  const ChatAdapter& default_adapter() const { return default_adapter_; }

  // A slot held by one request: its sequence and speculator (null without speculation).
  struct Slot {
    size_t index;
    Sequence* sequence;
    Speculator* speculator;
  };

  // nullopt when is_cancelled says so while waiting. The slot returned runs `adapter`.
  std::optional<Slot> acquire(std::span<const int32_t> tokens, const ChatAdapter& adapter,
                              const std::function<bool()>& is_cancelled) {
    std::unique_lock<std::mutex> lock(mutex_);
    const uint64_t ticket = next_ticket_++;
    waiting_.push_back(ticket);
    auto my_turn = [&] { return waiting_.front() == ticket && free_count() > 0; };
    while (!my_turn()) {
      cv_.wait_for(lock, std::chrono::milliseconds(50));
      if (is_cancelled && is_cancelled()) {
        waiting_.erase(std::find(waiting_.begin(), waiting_.end(), ticket));
        cv_.notify_all();
        return std::nullopt;
      }
    }
    waiting_.pop_front();
    const auto [best, best_score] = choose_slot(tokens, adapter);
    busy_[best] = true;
    last_used_[best] = ++clock_;
    if (engine_) engine_->join();
    cv_.notify_all();
    Slot slot{best, sequences_[best].get(), best < speculators_.size() ? speculators_[best].get() : nullptr};
    lock.unlock();
    if (best_score < 0) {
      // The new KV cache is allocated outside the lock; the swap is made under it, where
      // choose_slot reads the free slots' sequences.
      std::unique_ptr<Sequence> fresh = make_sequence(adapter);
      slot.sequence = fresh.get();
      std::lock_guard<std::mutex> relock(mutex_);
      sequences_[best] = std::move(fresh);
    }
    return slot;
  }

  void release(const Slot& slot) {
    std::lock_guard<std::mutex> lock(mutex_);
    busy_[slot.index] = false;
    if (engine_) engine_->leave();
    cv_.notify_all();
  }

  int64_t n_ctx() const { return n_ctx_; }  // cached: a slot may be rebuilt concurrently
  model::BatchEngineStats batch_stats() const {
    return engine_ ? engine_->stats() : model::BatchEngineStats{};
  }
  int64_t queued() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<int64_t>(waiting_.size());
  }

 private:
  // The free slot for `tokens`: the one on the same adapter sharing the longest prefix (the
  // least recently used among equals), unless that would throw away most of a cached
  // conversation to reuse a short common start (the chat template's preamble) while an empty
  // slot is free: then the empty one, so the other conversation keeps its cache. Returns the
  // slot and its shared prefix (-1: another adapter, the slot is rebuilt).
  std::pair<size_t, int64_t> choose_slot(std::span<const int32_t> tokens,
                                         const ChatAdapter& adapter) const {
    size_t best = sequences_.size(), empty = sequences_.size();
    int64_t best_score = -2;
    for (size_t i = 0; i < sequences_.size(); ++i) {
      if (busy_[i]) continue;
      const int64_t score = runs(*sequences_[i], adapter)
                                ? static_cast<int64_t>(sequences_[i]->shared_prefix(tokens))
                                : -1;
      if (score > best_score || (score == best_score && last_used_[i] < last_used_[best])) {
        best = i, best_score = score;
      }
      if (sequences_[i]->tokens().empty() && empty == sequences_.size()) empty = i;
    }
    const int64_t held = static_cast<int64_t>(sequences_[best]->tokens().size());
    if (empty != sequences_.size() && empty != best && 2 * std::max<int64_t>(best_score, 0) < held) {
      return {empty, runs(*sequences_[empty], adapter) ? 0 : -1};
    }
    return {best, best_score};
  }

  size_t free_count() const { return static_cast<size_t>(std::count(busy_.begin(), busy_.end(), false)); }

  static bool runs(const Sequence& s, const ChatAdapter& a) {
    return s.adapter() == a.adapter && (!a.adapter || s.adapter_scale() == a.scale);
  }
  // The draft model's sequences run as the target's do: in shared steps of their own batch
  // engine, or on threads of their own.
  void make_draft_context(const ChatServiceOptions& o) {
    draft_options_ = options_;
    draft_options_.engine = nullptr;
    draft_options_.n_ctx = n_ctx_or_default(o);  // the target's context, not the draft's own
    if (o.speculation.draft && engine_) {
      model::BatchEngineOptions b;
      b.n_threads = engine_->n_threads();
      b.n_ctx = n_ctx_or_default(o);
      b.step_tokens = o.step_tokens;
      draft_engine_ = std::make_shared<model::BatchEngine>(o.speculation.draft->weights(), b);
      draft_options_.engine = draft_engine_;
    }
  }
  int64_t n_ctx_or_default(const ChatServiceOptions& o) const {
    return model::default_n_ctx(weights_->hparams(), o.n_ctx);
  }

  std::unique_ptr<Sequence> make_sequence(const ChatAdapter& a) const {
    model::ContextOptions c = options_;
    c.adapter = a.adapter;
    c.adapter_scale = a.scale;
    return std::make_unique<Sequence>(weights_, c);
  }

  std::shared_ptr<const model::Model> weights_;
  std::shared_ptr<model::BatchEngine> engine_;  // null without batching
  model::ContextOptions options_;
  std::shared_ptr<model::BatchEngine> draft_engine_;  // batching with a draft model only
  model::ContextOptions draft_options_;
  std::vector<std::unique_ptr<Speculator>> speculators_;  // one per slot, or none
  ChatAdapter default_adapter_;
  int64_t n_ctx_ = 0;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Sequence>> sequences_;
  std::vector<bool> busy_;
  std::vector<uint64_t> last_used_;  // clock_ when each slot was last taken
  uint64_t clock_ = 0;
  uint64_t next_ticket_ = 0;
  std::deque<uint64_t> waiting_;  // tickets in arrival order
};

ChatService::ChatService(std::shared_ptr<const LoadedModel> model,
                         const ChatServiceOptions& options)
    : model_(std::move(model)),
      slots_((check_speculation(options.speculation, *model_),
              std::make_unique<Slots>(*model_, options))),
      grammars_(std::make_unique<guided::CompiledGrammarCache>()) {}

ChatService::~ChatService() = default;

PromptExtras prompt_extras(const ChatRequest& request) {
  PromptExtras extras;
  extras.tools = tool_list_json(request.tools);
  extras.response_schema = request.response_schema;
  if (!request.response_name.empty()) extras.response_name = request.response_name;
  extras.response_description = request.response_description;
  return extras;
}

ChatCacheStats ChatService::cache_stats() const {
  const guided::MaskCache::SharedStats masks = guided::MaskCache::shared_stats();
  return {grammars_->size(), grammars_->bytes(), masks.caches,
          masks.states,      masks.bytes,        model_->loop_index_bytes()};
}

int64_t ChatService::n_ctx() const { return slots_->n_ctx(); }

model::BatchEngineStats ChatService::batch_stats() const { return slots_->batch_stats(); }

int64_t ChatService::queued_requests() const { return slots_->queued(); }

ChatUsageStats ChatService::usage_stats() const {
  return {requests_.load(), prompt_tokens_.load(), cached_prompt_tokens_.load(),
          completion_tokens_.load()};
}

namespace {

// The tokens of a plain completion's prompt, checked: ids inside the vocabulary, not empty.
std::vector<int32_t> text_prompt_tokens(const ChatRequest& request, const LoadedModel& model) {
  if (!request.messages.empty() || !request.tools.empty() || request.response_schema) {
    throw_error(ErrorCode::kInvalidArgument,
                "a text prompt takes no messages, tools or response format");
  }
  const TextPrompt& p = *request.text_prompt;
  const tokenizer::Tokenizer& tok = model.tokenizer();
  std::vector<int32_t> tokens = p.tokens;
  if (tokens.empty() && !p.text.empty()) {
    tokens = tok.encode(p.text, {.parse_special = true, .add_bos = tok.add_bos()});
  } else if (tokens.empty() && tok.add_bos() && tok.bos_id()) {
    tokens = {*tok.bos_id()};  // an empty text prompt: generate from the start of a text
  }
  if (tokens.empty()) throw_error(ErrorCode::kInvalidArgument, "the prompt is empty");
  const int64_t n_vocab = std::min<int64_t>(tok.vocab_size(), model.weights()->hparams().n_vocab);
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= n_vocab) {
      throw_error(ErrorCode::kInvalidArgument,
                  "prompt token " + std::to_string(i) + " is " + std::to_string(tokens[i]) +
                      ", outside the vocabulary [0, " + std::to_string(n_vocab) + ")");
    }
  }
  return tokens;
}

// The chat template's rendering of the conversation, tokenized.
std::vector<int32_t> chat_prompt_tokens(const ChatRequest& request, const LoadedModel& model) {
  if (!model.chat_template()) throw_error(ErrorCode::kUnsupported, model.unavailable_reason());
  check_roles(request.messages);
  const std::string prompt =
      model.chat_template()->render(request.messages, true, prompt_extras(request));
  const tokenizer::Tokenizer& tok = model.tokenizer();
  return tok.encode(prompt, {.parse_special = true, .add_bos = tok.add_bos()});
}

// Makes `seq` hold `tokens` with logits at every position, appending each token's
// log-probability (from the logits before it) to `out`; the first token has none (NaN) unless
// `skip_first` (an added BOS, which the client did not send and is not reported). Works in
// chunks so that a long prompt's rows never all sit in memory. Returns the logits after the
// last token.
std::span<const float> score_prompt(
    Sequence& seq, std::span<const int32_t> tokens, int top, bool skip_first,
    const std::function<ChatLogprob(const sample::SampledLogprobs&)>& to_chat,
    std::vector<ChatLogprob>& out) {
  constexpr size_t kChunk = 64;
  std::span<const float> last = seq.prefill(tokens.first(1));
  const size_t n_vocab = last.size();
  if (!skip_first) {
    ChatLogprob first = to_chat(sample::SampledLogprobs{{tokens[0], 0.0f}, {}});
    first.chosen.logprob = std::numeric_limits<float>::quiet_NaN();
    out.push_back(std::move(first));
  }
  for (size_t i = 1; i < tokens.size();) {
    out.push_back(to_chat(sample::logprobs_at(last, tokens[i], top)));
    const size_t len = std::min(kChunk, tokens.size() - i);
    const std::span<const float> rows = seq.extend(tokens.subspan(i, len));
    for (size_t j = 0; j + 1 < len; ++j) {
      out.push_back(to_chat(sample::logprobs_at(rows.subspan(j * n_vocab, n_vocab), tokens[i + j + 1], top)));
    }
    last = rows.subspan((len - 1) * n_vocab, n_vocab);
    i += len;
  }
  return last;
}

}  // namespace

ChatResult ChatService::complete(const ChatRequest& request,
                                 const std::function<bool(const ChatDelta&)>& on_delta,
                                 const std::function<bool()>& is_cancelled) {
  const bool plain = request.text_prompt.has_value();
  const std::vector<int32_t> tokens =
      plain ? text_prompt_tokens(request, *model_) : chat_prompt_tokens(request, *model_);
  const tokenizer::Tokenizer& tok = model_->tokenizer();
  if (!plain && request.max_tokens == 0) {
    throw_error(ErrorCode::kInvalidArgument, "max_tokens must be at least 1 for a chat");
  }

  DecodePlan plan;
  plan.tool_mode = tool_mode(request);
  plan.parallel_tool_calls = request.parallel_tool_calls;
  plan.max_tokens = request.max_tokens;
  plan.logprobs_top = request.logprobs_top;
  if (request.response_schema) {
    plan.answer_grammar = grammars_->get_or_compile(request.response_schema->dump());
  }
  if (plan.tool_mode != ToolMode::kNone) {
    const ChatTemplate& tmpl = *model_->chat_template();
    const std::optional<ToolCallFormat> format = tmpl.tool_call_format();
    if (!format) tmpl.render_tool_calls({});  // throws naming the template
    const std::string only = request.tool_choice == ToolChoice::kNamed ? request.tool_name : "";
    plan.tool_grammar = compile_tool_call_grammar(request.tools, *format, only,
                                                  request.parallel_tool_calls, grammars_.get());
  }
  const auto to_chat = [&tok](const sample::SampledLogprobs& l) {
    ChatLogprob entry{{tok.token_bytes(l.chosen.token), l.chosen.logprob}, {}};
    for (const sample::TokenLogprob& t : l.top) {
      entry.top.push_back({tok.token_bytes(t.token), t.logprob});
    }
    return entry;
  };
  if (on_delta && plan.logprobs_top >= 0) {
    plan.on_logprob = [&](const sample::SampledLogprobs& l) {
      on_delta(ChatDelta{"", {to_chat(l)}});  // a cancel is seen at the token's text
    };
  }
  sample::Sampler sampler(request.sampling);

  ChatResult out;
  out.prompt_tokens = static_cast<int64_t>(tokens.size());
  // An added BOS is the service's, not part of the client's prompt.
  const bool added_bos = plain && request.text_prompt->tokens.empty() && tok.add_bos() &&
                         tok.bos_id() && tokens.front() == *tok.bos_id();
  if (plain) out.prompt_text = tok.decode(std::span(tokens).subspan(added_bos ? 1 : 0));
  const std::optional<Slots::Slot> slot =
      slots_->acquire(tokens, request.adapter.value_or(slots_->default_adapter()), is_cancelled);
  if (!slot) {
    out.finish_reason = "cancelled";
    return out;
  }
  struct Release {
    Slots* slots;
    Slots::Slot slot;
    ~Release() { slots->release(slot); }
  } release{slots_.get(), *slot};
  Sequence* seq = slot->sequence;
  plan.speculator = slot->speculator;
  ResponseDecoder decoder(*model_, std::move(plan), sampler);
  if (static_cast<int64_t>(tokens.size()) > seq->n_ctx()) seq->clear();
  const auto t0 = std::chrono::steady_clock::now();
  const int score_top = plain ? request.text_prompt->logprobs_top : -1;
  const std::span<const float> logits =
      score_top >= 0 ? score_prompt(*seq, tokens, score_top, added_bos, to_chat, out.prompt_logprobs)
                     : seq->prefill(tokens);
  const auto t1 = std::chrono::steady_clock::now();
  // Scoring evaluates every position but the first.
  out.cached_prompt_tokens =
      score_top >= 0 ? 0 : out.prompt_tokens - seq->last_prefill_evaluated();
  DecodeResult r;
  if (request.max_tokens == 0) {
    r.finish_reason = "length";  // the prompt only
  } else {
    r = decoder.run(
        *seq, logits,
        [&](std::string_view piece) {
          return !on_delta || on_delta(ChatDelta{std::string(piece), {}});
        },
        [&] { return !is_cancelled || !is_cancelled(); });
  }
  const auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  out.prefill_ms = ms(t0, t1);
  out.decode_ms = ms(t1, std::chrono::steady_clock::now());
  out.speculation = r.speculation;
  out.mask_ms = r.mask_ms;
  out.text = r.text;
  out.tool_calls = r.tool_calls;
  for (const sample::SampledLogprobs& l : r.answer_logprobs) out.logprobs.push_back(to_chat(l));
  if (r.end_logprob) out.end_logprob = to_chat(*r.end_logprob);
  for (ToolCall& c : out.tool_calls) {
    char id[32];
    std::snprintf(id, sizeof id, "call_%08llx", static_cast<unsigned long long>(++call_counter_));
    c.id = id;
  }
  out.finish_reason = r.finish_reason;
  out.completion_tokens =
      static_cast<int64_t>(r.tokens.size()) + (r.finish_reason == "stop" ? 1 : 0);
  ++requests_;
  prompt_tokens_ += static_cast<uint64_t>(out.prompt_tokens);
  cached_prompt_tokens_ += static_cast<uint64_t>(out.cached_prompt_tokens);
  completion_tokens_ += static_cast<uint64_t>(out.completion_tokens);
  spec_rounds_ += r.speculation.rounds;
  spec_proposed_ += r.speculation.proposed;
  spec_accepted_ += r.speculation.accepted;
  spec_forced_ += r.speculation.forced;
  return out;
}

SpeculationStats ChatService::speculation_stats() const {
  return {spec_rounds_.load(), spec_proposed_.load(), spec_accepted_.load(), spec_forced_.load()};
}

}  // namespace afm
