// Helpers for writing synthetic afm chat transcripts: compact JSON, tool specs, object schemas,
// and the template blocks of framework/afm_prompt_format.h (one definition for training text
// and runtime prompts).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "framework/afm_prompt_format.h"
#include "framework/chat_template.h"

namespace afm::data::synth {

using Json = nlohmann::ordered_json;

std::string compact(const Json& j);

// The template blocks themselves live in the framework (framework/afm_prompt_format.h).
using afm::system_with_tools;
using afm::user_with_response_format;
inline std::string tool_calls(const Json& calls) { return afm::tool_call_block(calls); }

// A tool description for the system tools list: {"name", "description", "parameters"}.
Json tool_spec(std::string_view name, std::string_view description, const Json& parameters);

// A JSON-schema object type: {"type":"object","properties":...,"required":[...],
// "additionalProperties":false}, every property required unless listed in `optional`.
Json object_schema(const Json& properties, const std::vector<std::string>& optional = {});

}  // namespace afm::data::synth
