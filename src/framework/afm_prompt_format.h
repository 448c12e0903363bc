// The parts of the afm chat template (ARCHITECTURE.md section 5) that live inside turns: the
// tool list of a system turn, the response-format block of a user turn and the tool-call
// block of an assistant turn. Training data (src/data/synth) and runtime prompts both use
// these functions, so what a model was trained on and what it is shown cannot drift apart.
//
// JSON inside these blocks is compact (no spaces), keys in insertion order.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace afm {

inline constexpr std::string_view kToolsMarker = "\n\nsystem tools: ";
inline constexpr std::string_view kResponseFormatMarker = "\n\nresponse format in json.\n";
inline constexpr std::string_view kToolCallStartToken = "<executable_start>";
inline constexpr std::string_view kToolCallEndToken = "<executable_end>";
// Text between the start token and the JSON array of calls, and after the array.
inline constexpr std::string_view kToolCallBodyOpen = " ```function\n";
inline constexpr std::string_view kToolCallBodyClose = "```";

// "{instructions}\n\nsystem tools: [{...}, ...]"
std::string system_with_tools(std::string_view instructions, const nlohmann::ordered_json& tools);

// "{prompt}\n\nresponse format in json.\nname: {name}\ndescription: {description}\n
// schema: {schema}"
std::string user_with_response_format(std::string_view prompt, std::string_view name,
                                      std::string_view description,
                                      const nlohmann::ordered_json& schema);

// "<executable_start> ```function\n[{"name":...,"arguments":{...}}]```<executable_end>"
std::string tool_call_block(const nlohmann::ordered_json& calls);

}  // namespace afm
