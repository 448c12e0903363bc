#include "framework/chat_template.h"

#include "base/error.h"

namespace afm {
namespace {

std::string render_afm(const ChatMessage& m) {
  return "<turn_start> " + m.role + "\n" + m.content + "<turn_end>";
}

std::string render_chatml(const ChatMessage& m) {
  return "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
}

std::string render_llama3(const ChatMessage& m) {
  return "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + m.content + "<|eot_id|>";
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

std::string ChatTemplate::render(const std::vector<ChatMessage>& messages,
                                 bool add_generation_prompt) const {
  std::string out;
  for (const ChatMessage& m : messages) {
    switch (kind_) {
      case ChatTemplateKind::kAfm: out += render_afm(m); break;
      case ChatTemplateKind::kChatMl: out += render_chatml(m); break;
      case ChatTemplateKind::kLlama3: out += render_llama3(m); break;
      default: AFM_CHECK(false && "no template");
    }
  }
  if (add_generation_prompt) {
    switch (kind_) {
      case ChatTemplateKind::kAfm: out += "<turn_start> assistant\n"; break;
      case ChatTemplateKind::kChatMl: out += "<|im_start|>assistant\n"; break;
      case ChatTemplateKind::kLlama3: out += "<|start_header_id|>assistant<|end_header_id|>\n\n"; break;
      default: break;
    }
  }
  return out;
}

std::vector<std::string> ChatTemplate::end_of_turn_tokens() const {
  switch (kind_) {
    case ChatTemplateKind::kAfm: return {"<turn_end>"};
    case ChatTemplateKind::kChatMl: return {"<|im_end|>"};
    case ChatTemplateKind::kLlama3: return {"<|eot_id|>"};
    default: return {};
  }
}

}  // namespace afm
