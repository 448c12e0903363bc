#include "framework/chat_template_kind.h"

namespace afm {

ChatTemplateKind detect_chat_template(std::string_view jinja) {
  if (jinja.empty()) return ChatTemplateKind::kNone;
  // Each family is identified by the control tokens its turns are built from.
  if (jinja.find("<turn_start>") != std::string_view::npos) return ChatTemplateKind::kAfm;
  if (jinja.find("<|im_start|>") != std::string_view::npos) return ChatTemplateKind::kChatMl;
  if (jinja.find("<|start_header_id|>") != std::string_view::npos) return ChatTemplateKind::kLlama3;
  return ChatTemplateKind::kUnknown;
}

std::string_view chat_template_kind_name(ChatTemplateKind kind) {
  switch (kind) {
    case ChatTemplateKind::kNone:
      return "none";
    case ChatTemplateKind::kAfm:
      return "afm";
    case ChatTemplateKind::kChatMl:
      return "chatml";
    case ChatTemplateKind::kLlama3:
      return "llama3";
    case ChatTemplateKind::kUnknown:
      return "unknown";
  }
  return "unknown";
}

}  // namespace afm
