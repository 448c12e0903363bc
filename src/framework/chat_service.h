// Stateless chat completions over a pool of KV-cache slots: the engine behind `afm serve`.
//
// A request carries the whole conversation (as OpenAI's API does). The service renders it with
// the model's chat template, tokenizes it, picks the free slot whose cached tokens share the
// longest prefix with it, prefills only the rest, then decodes, enforcing the response schema
// or the tool-call grammar through the guided engine.
//
// Errors (before any token is produced): afm::Error kInvalidArgument for a malformed request
// (unknown role, tool_choice naming an undeclared tool, a prompt that does not fit the
// context: "the prompt has N tokens but the context holds M"), kUnsupported for a schema
// keyword the guided engine cannot enforce (the message names keyword and JSON pointer) or a
// feature the model's chat template lacks (tools on a template without a tool-call format).
// Thread safety: complete() may be called from any number of threads; at most n_slots
// requests run at once, the others wait in FIFO order.
// Adapters: a request may name a LoRA adapter (ChatRequest::adapter). A slot's cached tokens
// are reused only by requests on the same adapter and scale; a slot that must change adapter
// is rebuilt empty, so K/V computed under one adapter never serves another.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "framework/chat_template.h"
#include "framework/loaded_model.h"
#include "framework/speculator.h"
#include "framework/tool_grammar.h"  // ChatToolSpec
#include "guided/json_schema_compiler.h"
#include "model/batch_engine.h"
#include "sample/logprobs.h"
#include "sample/sampler.h"

namespace afm {

enum class ToolChoice {
  kAuto,      // the model decides between text and tool calls
  kNone,      // text only
  kRequired,  // at least one tool call
  kNamed,     // exactly calls of ChatRequest::tool_name
};

// A LoRA adapter and its scale (a null adapter: the base model).
struct ChatAdapter {
  std::shared_ptr<const model::LoraAdapter> adapter;
  float scale = 1.0f;
  bool operator==(const ChatAdapter&) const = default;
};

// A plain completion of a prompt as given, without the chat template (OpenAI's legacy
// /v1/completions, which lm-eval's loglikelihood tasks use). Generation ends at the model's end
// of text (end_of_generation_tokens), max_tokens or a stop sequence.
struct TextPrompt {
  std::string text;             // tokenized with the model's BOS rule; used when tokens is empty
  std::vector<int32_t> tokens;  // token ids used as given (no BOS added), each < the vocabulary
  // >= 0: also score the prompt (ChatResult::prompt_logprobs) with this many alternatives per
  // token; < 0: the prompt is not scored.
  int logprobs_top = -1;
};

struct ChatRequest {
  // Set: a plain completion of this prompt; messages, tools and the response format must then
  // be empty (kInvalidArgument otherwise).
  std::optional<TextPrompt> text_prompt;
  // The adapter to run on; unset: the service's (ChatServiceOptions::adapter).
  std::optional<ChatAdapter> adapter;
  std::vector<ChatMessage> messages;
  std::vector<ChatToolSpec> tools;
  ToolChoice tool_choice = ToolChoice::kAuto;
  std::string tool_name;          // kNamed only
  bool parallel_tool_calls = true;  // false: at most one call
  // When set, the answer is JSON valid for this schema (strict, fail closed).
  std::optional<nlohmann::ordered_json> response_schema;
  std::string response_name;      // shown to the model with the schema
  std::string response_description;  // likewise (json_schema.description)
  sample::SamplerConfig sampling;
  // < 0: until the end of the turn or the context is full; 0 (text prompts only): none, the
  // prompt is only evaluated (and scored when asked).
  int64_t max_tokens = -1;
  // >= 0: report each answer token's log-probability with this many alternatives
  // (ChatResult::logprobs); < 0: none.
  int logprobs_top = -1;
};

// One answer token's log-probability (sample/logprobs.h), with the bytes it stands for.
struct ChatTokenLogprob {
  std::string bytes;  // may be part of a UTF-8 character
  float logprob = 0.0f;
};
struct ChatLogprob {
  ChatTokenLogprob chosen;
  std::vector<ChatTokenLogprob> top;  // most likely first
};

// Text produced since the previous delta. Tool calls are not streamed as text: they arrive
// whole in ChatResult::tool_calls. With ChatRequest::logprobs_top >= 0 each answer token's
// entry comes first in a delta of its own (empty text), before the text it completes.
struct ChatDelta {
  std::string text;
  std::vector<ChatLogprob> logprobs;
};

struct ChatResult {
  std::string text;                 // the answer (empty when the model only called tools)
  std::vector<ToolCall> tool_calls;  // with ids "call_<n>"
  std::string finish_reason;        // "stop", "length", "tool_calls", "cancelled"
  int64_t prompt_tokens = 0;
  int64_t cached_prompt_tokens = 0;  // of prompt_tokens, reused from a slot's KV cache
  int64_t completion_tokens = 0;
  // With ChatRequest::logprobs_top >= 0: one entry per answer-text token (sample/logprobs.h).
  std::vector<ChatLogprob> logprobs;
  // With logprobs_top >= 0 and an answer that ended at an end token: that token's entry.
  std::optional<ChatLogprob> end_logprob;
  // Text prompts: the prompt as its tokens decode (BOS included when it was added), and with
  // TextPrompt::logprobs_top >= 0 one entry per prompt token, in order. The first token has no
  // context: its logprob is NaN and its alternatives are empty.
  std::string prompt_text;
  std::vector<ChatLogprob> prompt_logprobs;
  double prefill_ms = 0, decode_ms = 0;  // evaluating the prompt; the turn's tokens
  double mask_ms = 0;  // of decode_ms, computing the grammar's allowed-token masks
  SpeculationStats speculation;          // with ChatServiceOptions::speculation
};

struct ChatServiceOptions {
  int n_slots = 1;        // concurrent sequences (each holds a KV cache of n_ctx)
  int64_t n_ctx = 0;      // 0: the model's training context, at most 4096
  // Continuous batching (model/batch_engine.h): the running requests' tokens share forward
  // passes on one pool of n_threads (0: the physical cores). Off: each slot runs its own
  // passes on n_threads of its own (0: the physical cores / n_slots, at least 1).
  bool batching = true;
  int64_t step_tokens = 256;  // batching: tokens per shared step (prefill is split to fit)
  int n_threads = 0;
  // A LoRA adapter every slot runs with (null: the base model); one adapter per service, so
  // a slot's cached prefix never mixes adapters.
  std::shared_ptr<const model::LoraAdapter> adapter;
  float adapter_scale = 1.0f;
  // Speculative decoding for every request (speculator.h): prompt lookup and/or a draft model
  // (one draft KV cache per slot). Answers are token for token those of plain decoding.
  SpeculationConfig speculation;
};

// What the template shows besides the turns (tool list, response format), for `request`: the
// one definition ChatService and training data (training_example.h) both render with.
PromptExtras prompt_extras(const ChatRequest& request);

// What the service's bounded caches hold (for a server's metrics): compiled grammars, the
// process-wide token-mask caches (guided/mask_cache.h) and the vocabularies' loop indexes.
struct ChatCacheStats {
  size_t grammar_entries = 0;
  size_t grammar_bytes = 0;
  size_t mask_caches = 0;
  size_t mask_states = 0;
  size_t mask_bytes = 0;
  size_t loop_index_bytes = 0;
};

// Totals over the requests answered so far (for a server's metrics).
struct ChatUsageStats {
  uint64_t requests = 0;
  uint64_t prompt_tokens = 0;
  uint64_t cached_prompt_tokens = 0;  // of prompt_tokens, reused from a slot's KV cache
  uint64_t completion_tokens = 0;
};

class ChatService {
 public:
  ChatService(std::shared_ptr<const LoadedModel> model, const ChatServiceOptions& options);
  ~ChatService();

  // Runs one request. on_delta is called with each new piece of answer text; returning false
  // cancels (finish_reason "cancelled"). is_cancelled (optional) is polled while the request
  // waits for a slot and before every token, so a request cancels even when no text flows
  // (queued, or generating a tool call). Throws as described at the top of this file.
  ChatResult complete(const ChatRequest& request,
                      const std::function<bool(const ChatDelta&)>& on_delta = {},
                      const std::function<bool()>& is_cancelled = {});

  const LoadedModel& model() const { return *model_; }
  int64_t n_ctx() const;
  ChatCacheStats cache_stats() const;
  // The batch engine's counters (all zero without batching), and requests waiting for a slot.
  model::BatchEngineStats batch_stats() const;
  int64_t queued_requests() const;
  ChatUsageStats usage_stats() const;
  // Drafting counters summed over the requests answered so far (zero without speculation).
  SpeculationStats speculation_stats() const;

 private:
  class Slots;
  std::shared_ptr<const LoadedModel> model_;
  std::unique_ptr<Slots> slots_;
  std::unique_ptr<guided::CompiledGrammarCache> grammars_;
  std::atomic<uint64_t> call_counter_{0};
  std::atomic<uint64_t> requests_{0}, prompt_tokens_{0}, cached_prompt_tokens_{0},
      completion_tokens_{0};
  std::atomic<uint64_t> spec_rounds_{0}, spec_proposed_{0}, spec_accepted_{0}, spec_forced_{0};
};

}  // namespace afm
