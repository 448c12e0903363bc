#include "framework/tool_grammar.h"

#include "base/error.h"
#include "guided/json_schema_compiler.h"

namespace afm {
namespace {

using Json = nlohmann::ordered_json;

Json call_schema(const ChatToolSpec& tool) {
  return Json{{"type", "object"},
              {"properties", Json{{"name", Json{{"const", tool.name}}},
                                  {"arguments", tool.parameters}}},
              {"required", Json::array({"name", "arguments"})},
              {"additionalProperties", false}};
}

// Compiling each parameter schema alone first gives errors that name the tool and a pointer
// inside its own schema rather than inside the combined one.
void check_parameters(const ChatToolSpec& tool) {
  try {
    guided::compile_json_schema(tool.parameters);
  } catch (const Error& e) {
    throw_error(e.code(), "tool '" + tool.name + "' parameters: " + e.what());
  }
}

}  // namespace

Json tool_list_json(const std::vector<ChatToolSpec>& tools) {
  Json out = Json::array();
  for (const ChatToolSpec& t : tools) {
    out.push_back(Json{{"name", t.name}, {"description", t.description}, {"parameters", t.parameters}});
  }
  return out;
}

std::shared_ptr<const guided::Grammar> compile_tool_call_grammar(
    const std::vector<ChatToolSpec>& tools, const ToolCallFormat& format,
    std::string_view only_name, bool parallel, guided::CompiledGrammarCache* cache) {
  if (tools.empty()) throw_error(ErrorCode::kInvalidArgument, "no tools are declared");
  Json calls = Json::array();
  for (const ChatToolSpec& tool : tools) {
    if (!only_name.empty() && tool.name != only_name) continue;
    calls.push_back(call_schema(tool));
  }
  if (calls.empty()) {
    throw_error(ErrorCode::kInvalidArgument,
                "tool_choice names '" + std::string(only_name) + "', which is not a declared tool");
  }
  Json one_call = calls.size() == 1 ? calls[0] : Json{{"anyOf", calls}};
  Json schema = one_call;
  if (format.array_of_calls) {
    schema = Json{{"type", "array"}, {"items", one_call}, {"minItems", 1}};
    if (!parallel) schema["maxItems"] = 1;
  }
  guided::JsonSchemaOptions options;
  options.prefix = format.body_open;
  options.suffix = format.body_close;
  try {
    return cache ? cache->get_or_compile(schema.dump(), options)
                 : guided::compile_json_schema(schema, options);
  } catch (const Error&) {
    for (const ChatToolSpec& tool : tools) check_parameters(tool);  // a message naming the tool
    throw;
  }
}

std::vector<ToolCall> parse_tool_call_body(std::string_view body, const ToolCallFormat& format) {
  const bool framed = body.size() >= format.body_open.size() + format.body_close.size() &&
                      body.starts_with(format.body_open) && body.ends_with(format.body_close);
  if (!framed) throw_error(ErrorCode::kFormat, "a tool-call block is not framed as the template expects");
  body.remove_prefix(format.body_open.size());
  body.remove_suffix(format.body_close.size());
  const Json parsed = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) throw_error(ErrorCode::kFormat, "a tool-call block is not JSON");
  const Json list = parsed.is_array() ? parsed : Json::array({parsed});
  std::vector<ToolCall> calls;
  for (const Json& c : list) {
    if (!c.is_object() || !c.contains("name") || !c["name"].is_string() || !c.contains("arguments")) {
      throw_error(ErrorCode::kFormat, "a tool call lacks a name or arguments: " + c.dump());
    }
    calls.push_back(ToolCall{"", c["name"].get<std::string>(), c["arguments"]});
  }
  return calls;
}

}  // namespace afm
