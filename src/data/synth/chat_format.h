// The parts of the afm chat template (ARCHITECTURE.md section 5) that live inside turns: the
// tool list of a system turn, the response-format block of a user turn and the tool-call
// block of an assistant turn. Turns themselves are rendered by framework/chat_template.h, so
// training text and runtime prompts cannot drift apart.
//
// JSON inside these blocks is compact (no spaces), keys in insertion order.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "framework/chat_template.h"

namespace afm::data::synth {

using Json = nlohmann::ordered_json;

inline constexpr std::string_view kToolsMarker = "\n\nsystem tools: ";
inline constexpr std::string_view kResponseFormatMarker = "\n\nresponse format in json.\n";
inline constexpr std::string_view kToolCallOpen = "<executable_start> ```function\n";
inline constexpr std::string_view kToolCallClose = "```<executable_end>";

std::string compact(const Json& j);

// "{instructions}\n\nsystem tools: [{...}, ...]"
std::string system_with_tools(std::string_view instructions, const Json& tools);

// "{prompt}\n\nresponse format in json.\nname: {name}\ndescription: {description}\n
// schema: {schema}"
std::string user_with_response_format(std::string_view prompt, std::string_view name,
                                      std::string_view description, const Json& schema);

// "<executable_start> ```function\n[{"name":...,"arguments":{...}}]```<executable_end>"
std::string tool_calls(const Json& calls);

// A tool description for the system tools list: {"name", "description", "parameters"}.
Json tool_spec(std::string_view name, std::string_view description, const Json& parameters);

// A JSON-schema object type: {"type":"object","properties":...,"required":[...],
// "additionalProperties":false}, every property required unless listed in `optional`.
Json object_schema(const Json& properties, const std::vector<std::string>& optional = {});

}  // namespace afm::data::synth
