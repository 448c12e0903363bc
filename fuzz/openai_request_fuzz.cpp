// libFuzzer target: any bytes as a chat-completions request body parse into a request or an
// ApiError (never another exception, never a crash), and a parsed request's conversation
// serializes back into a completion and SSE chunks.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "server/openai_protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  try {
    const afm::server::ParsedRequest p = afm::server::parse_chat_request(body, 1);
    afm::ChatResult r;
    r.text = p.chat.messages.back().content;
    r.tool_calls = p.chat.messages.back().tool_calls;
    r.finish_reason = "stop";
    const afm::server::CompletionMeta meta{"chatcmpl-f", 0, p.model};
    (void)afm::server::completion_json(meta, r).dump();
    const afm::server::SseEncoder enc(meta, p.include_usage);
    (void)(enc.start() + enc.content(r.text) + enc.finish(r));
  } catch (const afm::server::ApiError& e) {
    (void)e.to_json().dump();
  }
  return 0;
}
