// The record of a session (Swift: Transcript): instructions, prompts, tool calls, tool
// outputs and responses, in order. Append-only; a session's KV cache holds exactly its
// rendering, so a new turn only evaluates its own tokens.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace afm {

struct TranscriptEntry {
  enum class Kind { kInstructions, kPrompt, kToolCalls, kToolOutput, kResponse };
  struct Call {
    std::string name;
    nlohmann::ordered_json arguments;
  };
  TranscriptEntry(Kind k, std::string t = {}) : kind(k), text(std::move(t)) {}

  Kind kind;
  std::string text;  // instructions, prompt, response text, tool output (compact JSON if structured)
  std::vector<Call> calls;  // kToolCalls
  std::string tool_name;    // kToolOutput
  // kPrompt: the response format the prompt asked for; kInstructions: the tool list.
  std::optional<nlohmann::ordered_json> schema;
};

using Transcript = std::vector<TranscriptEntry>;

}  // namespace afm
