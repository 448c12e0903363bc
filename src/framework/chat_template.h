// Renders a conversation into the text a model was trained on, for the three template
// families afm implements (ARCHITECTURE.md section 5 for afm; ChatML; Llama-3). Templates are
// chosen from the model's tokenizer.chat_template; an unknown or missing one is an
// Error(kUnsupported) that names it, never a silent fallback.
//
// Besides plain turns, a template knows how its family writes a tool list (system turn), a
// response format (last user turn), tool calls (assistant turn) and tool results, and which
// single vocabulary tokens open and close a tool-call block (ToolCallFormat), so the decoder
// can constrain tool calls with a grammar. Llama-3 tool calling is not implemented: asking
// for it is Error(kUnsupported).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "framework/chat_template_kind.h"

namespace afm {

struct ToolCall {
  std::string id;    // "call_<n>" in server responses; free-form in requests
  std::string name;
  nlohmann::ordered_json arguments = nlohmann::ordered_json::object();
};

struct ChatMessage {
  ChatMessage() = default;
  ChatMessage(std::string r, std::string c, std::vector<ToolCall> calls = {}, std::string tool = {})
      : role(std::move(r)), content(std::move(c)), tool_calls(std::move(calls)), tool_name(std::move(tool)) {}

  std::string role;  // "system", "user", "assistant", "tool"
  std::string content;
  std::vector<ToolCall> tool_calls;  // assistant turns that called tools
  std::string tool_name;             // tool turns: the tool whose output `content` is
};

// What goes into the prompt besides the turns themselves.
struct PromptExtras {
  // [{"name", "description", "parameters"}]; empty: no tools.
  nlohmann::ordered_json tools = nlohmann::ordered_json::array();
  // Shown with the last user turn when set.
  std::optional<nlohmann::ordered_json> response_schema;
  std::string response_name = "response";
  std::string response_description;
};

// How one family writes tool calls inside an assistant turn:
//   start_token body_open JSON body_close end_token
// where JSON is an array of {"name","arguments"} objects (afm: all calls in one block) or one
// such object per block (ChatML: blocks joined by `between`).
struct ToolCallFormat {
  std::string start_token, end_token;
  std::string body_open, body_close;
  bool array_of_calls = true;
  std::string between;
};

class ChatTemplate {
 public:
  // From the model's Jinja template string.
  static ChatTemplate from_jinja(const std::string& jinja);
  explicit ChatTemplate(ChatTemplateKind kind);

  ChatTemplateKind kind() const { return kind_; }
  // The whole conversation; with add_generation_prompt, ends with an open assistant turn.
  // Special-token strings appear literally (encode them with parse_special).
  std::string render(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                     const PromptExtras& extras = {}) const;
  // One message as render() writes it (render() is the concatenation of these, plus the tool
  // list and response format, which render() folds into the system and last user turns).
  std::string render_message(const ChatMessage& message) const;
  // The text that opens an assistant turn, and the text after an assistant's content.
  std::string generation_prompt() const;
  std::string assistant_suffix() const;
  // Token strings that end an assistant turn in this template.
  std::vector<std::string> end_of_turn_tokens() const;
  // nullopt when this family has no tool-call format afm implements.
  std::optional<ToolCallFormat> tool_call_format() const;
  // The assistant-turn text for these calls (without the turn's opening and suffix).
  std::string render_tool_calls(const std::vector<ToolCall>& calls) const;

 private:
  std::vector<ChatMessage> with_extras(const std::vector<ChatMessage>& messages,
                                       const PromptExtras& extras) const;
  ChatTemplateKind kind_;
};

}  // namespace afm
