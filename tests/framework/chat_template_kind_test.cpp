#include "framework/chat_template_kind.h"

#include <gtest/gtest.h>

namespace afm {
namespace {

TEST(ChatTemplateKind, RecognisesFamilies) {
  EXPECT_EQ(detect_chat_template(""), ChatTemplateKind::kNone);
  EXPECT_EQ(detect_chat_template("{% for m in messages %}<|im_start|>{{ m.role }}"),
            ChatTemplateKind::kChatMl);
  EXPECT_EQ(detect_chat_template("<|start_header_id|>{{ role }}<|end_header_id|>"),
            ChatTemplateKind::kLlama3);
  EXPECT_EQ(detect_chat_template("<turn_start> system\n"), ChatTemplateKind::kAfm);
  EXPECT_EQ(detect_chat_template("[INST] {{ content }} [/INST]"), ChatTemplateKind::kUnknown);
  EXPECT_EQ(chat_template_kind_name(ChatTemplateKind::kChatMl), "chatml");
}

}  // namespace
}  // namespace afm
