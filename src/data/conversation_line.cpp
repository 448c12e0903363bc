#include "data/conversation_line.h"

#include "base/error.h"
#include "base/json_parse.h"
#include "server/api_error.h"
#include "server/openai_protocol.h"

namespace afm::data {

void bad_conversation(const std::string& where, const std::string& what) {
  throw_error(ErrorCode::kInvalidArgument, where + ": " + what);
}

ChatRequest parse_conversation(const std::string& line, const std::string& where) {
  ParsedJson doc = parse_ordered_json(line, 128);
  if (!doc.ok()) bad_conversation(where, "not a JSON value (or nested deeper than 128 levels)");
  if (!doc.value.is_object()) bad_conversation(where, "a conversation must be a JSON object");
  if (!doc.value.contains("model")) doc.value["model"] = "conversation";
  try {
    return server::parse_chat_request_json(doc.value, 0).chat;
  } catch (const server::ApiError& e) {
    bad_conversation(where, e.message);
  }
}

}  // namespace afm::data
