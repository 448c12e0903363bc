// Grammars that constrain tool calls: only declared tool names, arguments valid for that
// tool's parameter schema, in the chat template's tool-call block format (ToolCallFormat).
//
// The grammar covers the block body: body_open JSON body_close. The block's start and end are
// single vocabulary tokens that the decoder handles itself (the end token is the matcher's
// "end" token, allowed exactly when the body is complete).
//
// Errors: a parameter schema the guided engine cannot enforce throws afm::Error(kUnsupported)
// naming the tool and the keyword ("tool 'search' parameters: ... at /properties/q");
// a malformed one kInvalidArgument; an empty tool list or an unknown only_name
// kInvalidArgument. Thread safety: reentrant.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "framework/chat_template.h"
#include "guided/grammar.h"
#include "guided/json_schema_compiler.h"

namespace afm {

struct ChatToolSpec {
  std::string name;
  std::string description;
  nlohmann::ordered_json parameters = nlohmann::ordered_json::object();  // a JSON Schema
};

// The tool list as the prompt shows it: [{"name", "description", "parameters"}].
nlohmann::ordered_json tool_list_json(const std::vector<ChatToolSpec>& tools);

// only_name: when non-empty, calls of that tool only. parallel: false allows one call.
// cache (optional) keeps compiled grammars across requests.
std::shared_ptr<const guided::Grammar> compile_tool_call_grammar(
    const std::vector<ChatToolSpec>& tools, const ToolCallFormat& format,
    std::string_view only_name, bool parallel, guided::CompiledGrammarCache* cache = nullptr);

// The calls in one block's body text (body_open JSON body_close), ids left empty.
// Error(kFormat) when the text is not such a body.
std::vector<ToolCall> parse_tool_call_body(std::string_view body, const ToolCallFormat& format);

}  // namespace afm
