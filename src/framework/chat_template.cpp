#include "framework/chat_template.h"

#include "base/error.h"
#include "framework/afm_prompt_format.h"

namespace afm {
namespace {

using Json = nlohmann::ordered_json;

Json calls_json(const std::vector<ToolCall>& calls) {
  Json out = Json::array();
  for (const ToolCall& c : calls) out.push_back(Json{{"name", c.name}, {"arguments", c.arguments}});
  return out;
}

// ChatML models (Qwen2/2.5/3) are trained with tool signatures in <tools> tags in the system
// turn and calls as <tool_call> blocks, one JSON object each.
std::string chatml_tools_block(const Json& tools) {
  std::string out =
      "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
      "You are provided with function signatures within <tools></tools> XML tags:\n<tools>";
  for (const Json& t : tools) out += "\n" + Json{{"type", "function"}, {"function", t}}.dump();
  out +=
      "\n</tools>\n\nFor each function call, return a json object with function name and "
      "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": "
      "<function-name>, \"arguments\": <args-json-object>}\n</tool_call>";
  return out;
}

std::string generic_response_format(const Json& schema) {
  return "\n\nAnswer with JSON only, valid for this JSON Schema: " + schema.dump();
}

}  // namespace

ChatTemplate ChatTemplate::from_jinja(const std::string& jinja) {
  const ChatTemplateKind kind = detect_chat_template(jinja);
  if (kind == ChatTemplateKind::kNone) {
    throw_error(ErrorCode::kUnsupported, "the model has no chat template (tokenizer.chat_template)");
  }
  if (kind == ChatTemplateKind::kUnknown) {
    const std::string head = jinja.substr(0, 60);
    throw_error(ErrorCode::kUnsupported,
                "unknown chat template (supported: afm, chatml, llama3); it starts with: " + head);
  }
  return ChatTemplate(kind);
}

ChatTemplate::ChatTemplate(ChatTemplateKind kind) : kind_(kind) {}

std::string ChatTemplate::render_message(const ChatMessage& m) const {
  std::string content = m.content;
  if (!m.tool_calls.empty()) content += render_tool_calls(m.tool_calls);
  switch (kind_) {
    case ChatTemplateKind::kAfm:
      return "<turn_start> " + m.role + "\n" + content + "<turn_end>";
    case ChatTemplateKind::kChatMl:
      if (m.role == "tool") {
        return "<|im_start|>user\n<tool_response>\n" + content + "\n</tool_response><|im_end|>\n";
      }
      return "<|im_start|>" + m.role + "\n" + content + "<|im_end|>\n";
    case ChatTemplateKind::kLlama3: {
      const std::string role = m.role == "tool" ? "ipython" : m.role;
      return "<|start_header_id|>" + role + "<|end_header_id|>\n\n" + content + "<|eot_id|>";
    }
    default:
      AFM_CHECK(false && "no template");
  }
  return {};
}

std::string ChatTemplate::generation_prompt() const {
  switch (kind_) {
    case ChatTemplateKind::kAfm: return "<turn_start> assistant\n";
    case ChatTemplateKind::kChatMl: return "<|im_start|>assistant\n";
    case ChatTemplateKind::kLlama3: return "<|start_header_id|>assistant<|end_header_id|>\n\n";
    default: return {};
  }
}

std::string ChatTemplate::assistant_suffix() const {
  switch (kind_) {
    case ChatTemplateKind::kAfm: return "<turn_end>";
    case ChatTemplateKind::kChatMl: return "<|im_end|>\n";
    case ChatTemplateKind::kLlama3: return "<|eot_id|>";
    default: return {};
  }
}

std::vector<std::string> ChatTemplate::end_of_turn_tokens() const {
  switch (kind_) {
    case ChatTemplateKind::kAfm: return {"<turn_end>"};
    case ChatTemplateKind::kChatMl: return {"<|im_end|>"};
    case ChatTemplateKind::kLlama3: return {"<|eot_id|>"};
    default: return {};
  }
}

std::optional<ToolCallFormat> ChatTemplate::tool_call_format() const {
  switch (kind_) {
    case ChatTemplateKind::kAfm:
      return ToolCallFormat{std::string(kToolCallStartToken), std::string(kToolCallEndToken),
                            std::string(kToolCallBodyOpen), std::string(kToolCallBodyClose),
                            true, ""};
    case ChatTemplateKind::kChatMl:
      return ToolCallFormat{"<tool_call>", "</tool_call>", "\n", "\n", false, "\n"};
    default: return std::nullopt;
  }
}

std::string ChatTemplate::render_tool_calls(const std::vector<ToolCall>& calls) const {
  const std::optional<ToolCallFormat> f = tool_call_format();
  if (!f) {
    throw_error(ErrorCode::kUnsupported, "tool calls are not implemented for the " +
                                             std::string(chat_template_kind_name(kind_)) +
                                             " chat template");
  }
  if (f->array_of_calls) {
    return f->start_token + f->body_open + calls_json(calls).dump() + f->body_close + f->end_token;
  }
  std::string out;
  for (size_t i = 0; i < calls.size(); ++i) {
    if (i > 0) out += f->between;
    out += f->start_token + f->body_open +
           Json{{"name", calls[i].name}, {"arguments", calls[i].arguments}}.dump() +
           f->body_close + f->end_token;
  }
  return out;
}

std::vector<ChatMessage> ChatTemplate::with_extras(const std::vector<ChatMessage>& messages,
                                                   const PromptExtras& extras) const {
  std::vector<ChatMessage> out = messages;
  if (!extras.tools.empty()) {
    if (!tool_call_format()) render_tool_calls({});  // throws naming the template
    if (out.empty() || out.front().role != "system") out.insert(out.begin(), {"system", ""});
    ChatMessage& system = out.front();
    system.content = kind_ == ChatTemplateKind::kAfm
                         ? system_with_tools(system.content, extras.tools)
                         : system.content + chatml_tools_block(extras.tools);
  }
  if (extras.response_schema) {
    for (auto it = out.rbegin(); it != out.rend(); ++it) {
      if (it->role != "user") continue;
      it->content = kind_ == ChatTemplateKind::kAfm
                        ? user_with_response_format(it->content, extras.response_name,
                                                    extras.response_description,
                                                    *extras.response_schema)
                        : it->content + generic_response_format(*extras.response_schema);
      break;
    }
  }
  return out;
}

std::string ChatTemplate::render(const std::vector<ChatMessage>& messages,
                                 bool add_generation_prompt, const PromptExtras& extras) const {
  std::string out;
  for (const ChatMessage& m : with_extras(messages, extras)) out += render_message(m);
  if (add_generation_prompt) out += generation_prompt();
  return out;
}

}  // namespace afm
