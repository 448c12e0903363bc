// Pieces of LanguageModelSession that need no session state: transcript <-> chat messages,
// running a turn's tool calls concurrently, and parsing the final JSON.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "afm/generation_schema.h"
#include "afm/options.h"
#include "afm/tool.h"
#include "afm/transcript.h"
#include "framework/chat_template.h"
#include "framework/tool_grammar.h"
#include "sample/sampler.h"

namespace afm {

// The sampler settings for these options (greedy, top-k or top-p with seed and temperature).
sample::SamplerConfig sampler_config(const GenerationOptions& options);

// A transcript holding only these instructions (none when empty).
Transcript instructions_transcript(std::string instructions);

// The messages a transcript renders as (the tool list itself is added by PromptExtras).
std::vector<ChatMessage> transcript_messages(const Transcript& transcript);

TranscriptEntry prompt_entry(const std::string& prompt, const GenerationSchema* schema,
                             bool show_schema);

// The text that opens a turn of `role` (what render_message writes before the content).
std::string open_turn(const ChatTemplate& tmpl, const std::string& role);

// Runs every call on its own thread and returns the outputs in call order (structured
// outputs as compact JSON). Throws GenerationError(kToolCallError) naming the first tool that
// failed (or is not declared, which the grammar makes impossible).
std::vector<std::string> call_tools_concurrently(const std::vector<std::shared_ptr<Tool>>& tools,
                                                 const std::vector<ToolCall>& calls);

// The complete JSON text of a grammar-constrained answer; GenerationError(kDecodingFailure)
// if it does not parse (which the grammar makes impossible).
nlohmann::ordered_json parse_json(const std::string& text);

}  // namespace afm
