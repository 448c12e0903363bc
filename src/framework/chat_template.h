// Renders a conversation into the text a model was trained on, for the three template
// families afm implements (ARCHITECTURE.md section 5 for afm; ChatML; Llama-3). Templates are
// chosen from the model's tokenizer.chat_template; an unknown or missing one is an
// Error(kUnsupported) that names it, never a silent fallback.
#pragma once

#include <string>
#include <vector>

#include "framework/chat_template_kind.h"

namespace afm {

struct ChatMessage {
  std::string role;  // "system", "user", "assistant", "tool"
  std::string content;
};

class ChatTemplate {
 public:
  // From the model's Jinja template string.
  static ChatTemplate from_jinja(const std::string& jinja);
  explicit ChatTemplate(ChatTemplateKind kind);

  ChatTemplateKind kind() const { return kind_; }
  // The whole conversation; with add_generation_prompt, ends with an open assistant turn.
  // Special-token strings appear literally (encode them with parse_special).
  std::string render(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const;
  // Token strings that end an assistant turn in this template.
  std::vector<std::string> end_of_turn_tokens() const;

 private:
  ChatTemplateKind kind_;
};

}  // namespace afm
