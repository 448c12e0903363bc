// Recognises which chat-template family a model's Jinja template string belongs to.
// Names: "afm", "chatml", "llama3", "none" (no template), "unknown" (a template we do not
// implement; callers that need to render one report it as an error naming it).
#pragma once

#include <string_view>

namespace afm {

enum class ChatTemplateKind { kNone, kAfm, kChatMl, kLlama3, kUnknown };

ChatTemplateKind detect_chat_template(std::string_view jinja);
std::string_view chat_template_kind_name(ChatTemplateKind kind);

}  // namespace afm
