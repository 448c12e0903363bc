// The decode loop of one assistant turn: samples tokens after a prefilled prompt, keeping the
// answer inside its grammar (when there is one) and tool calls inside the tool-call grammar.
//
// The turn is a small state machine:
//   answer text (free or grammar-constrained)  --tool start token-->  tool-call body
//   tool-call body --tool end token--> end of turn (afm: one block holds every call) or, for
//   one-call-per-block formats with parallel calls, "another block or end of turn".
// ToolMode::kAuto lets the model choose the tool start token where the answer could begin
// (free text: anywhere); kRequired forces it as the first token; kNone never allows it.
//
// The final end-of-turn token is sampled but not evaluated and not part of tokens; every other
// generated token is evaluated, except the one that ends the turn by length or a tool block.
// With a speculator the sequence ends the turn holding exactly the same tokens (rejected and
// unused drafts are truncated away).
// A model without a chat template decodes plain text only (a text prompt), which ends at the
// tokenizer's end-of-generation tokens.
// Errors: afm::Error(kUnsupported) at construction when the tokenizer lacks a token the plan
// needs (end of turn, tool start/end), or the plan has a grammar and the model no chat
// template. Single-threaded; one decoder per turn.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "framework/chat_template.h"
#include "framework/loaded_model.h"
#include "framework/sequence.h"
#include "framework/speculator.h"
#include "guided/grammar.h"
#include "sample/logprobs.h"
#include "sample/sampler.h"

namespace afm {

enum class ToolMode { kNone, kAuto, kRequired };

struct DecodePlan {
  std::shared_ptr<const guided::Grammar> answer_grammar;  // null: free text
  std::shared_ptr<const guided::Grammar> tool_grammar;    // null: no tools
  ToolMode tool_mode = ToolMode::kNone;
  bool parallel_tool_calls = true;
  int64_t max_tokens = -1;  // < 0: until the end of the turn or the context is full
  // >= 0: record the log-probability of every answer-text token with this many alternatives
  // (DecodeResult::answer_logprobs); < 0: none (no extra work per token).
  int logprobs_top = -1;
  // Called with each answer_logprobs entry as it is recorded, before the token's text reaches
  // on_text (streaming); may be empty.
  std::function<void(const sample::SampledLogprobs&)> on_logprob;
  // Speculative decoding (speculator.h): drafts are verified in one forward pass of several
  // positions; the turn's tokens are exactly those of plain decoding. Null: plain decoding.
  // Owned by the caller (it keeps the draft model's cache between turns).
  Speculator* speculator = nullptr;
};

struct DecodeResult {
  std::vector<int32_t> tokens;  // generated tokens of the turn (not the final end-of-turn)
  std::string text;             // the answer text
  std::vector<ToolCall> tool_calls;
  std::string finish_reason;    // "stop", "length", "tool_calls", "cancelled"
  // For a grammar-constrained answer: the text is a complete sentence of the grammar.
  bool answer_complete = false;
  // With DecodePlan::logprobs_top >= 0: one entry per sampled token of the answer text, in
  // order (not tool-call tokens, the tool start or the end of turn).
  std::vector<sample::SampledLogprobs> answer_logprobs;
  // With DecodePlan::logprobs_top >= 0, when the answer ended at an end token (of the turn or
  // of the text): that token's entry (OpenAI's text completions report it; chat does not).
  std::optional<sample::SampledLogprobs> end_logprob;
  // With a speculator: this turn's drafting counters.
  SpeculationStats speculation;
  // Time spent computing the allowed-token masks (grammar, tool-call state) of the sampled
  // tokens: the cost of guided decoding per turn.
  double mask_ms = 0;
};

class ResponseDecoder {
 public:
  ResponseDecoder(const LoadedModel& model, DecodePlan plan, sample::Sampler& sampler);
  ~ResponseDecoder();

  // logits: after the prompt (Sequence::prefill). on_text receives answer text as it becomes
  // complete UTF-8; returning false cancels. keep_going (optional) is asked before each token.
  DecodeResult run(Sequence& sequence, std::span<const float> logits,
                   const std::function<bool(std::string_view)>& on_text,
                   const std::function<bool()>& keep_going = {});

 private:
  class Turn;
  const LoadedModel& model_;
  DecodePlan plan_;
  sample::Sampler& sampler_;
};

}  // namespace afm
