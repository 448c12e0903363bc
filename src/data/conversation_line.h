// One line of a conversations JSONL file (`afm data sft`, `afm train sft|adapter|rloo`): a
// JSON object in the shape of an OpenAI chat-completions request ("model" not needed),
// validated by the server's own request parser, so training reads exactly what the server
// accepts.
//
// Errors: afm::Error(kInvalidArgument) "WHERE: problem" (WHERE is "FILE:LINE") for text that
// is not a JSON object (or nests deeper than 128 levels) or a request the server would refuse.
// Thread safety: reentrant.
#pragma once

#include <string>

#include "framework/chat_service.h"

namespace afm::data {

ChatRequest parse_conversation(const std::string& line, const std::string& where);

[[noreturn]] void bad_conversation(const std::string& where, const std::string& what);

}  // namespace afm::data
