// libFuzzer target: any bytes as a chat-completions, text-completions or tokenizer-route body parse
// into a request or an ApiError (never another exception, never a crash), and a parsed
// request serializes back into a completion and SSE chunks (text completions with per-token
// log-probabilities cut from the prompt, so partial UTF-8 tokens and offsets are exercised).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>

#include "server/openai_protocol.h"
#include "server/text_completion.h"
#include "server/tokenizer_api.h"

namespace {

using Json = nlohmann::ordered_json;

std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

void chat(std::string_view body) {
  const afm::server::ParsedRequest p = afm::server::parse_chat_request(body, 1);
  afm::ChatResult r;
  r.text = p.chat.messages.back().content;
  r.tool_calls = p.chat.messages.back().tool_calls;
  r.finish_reason = "stop";
  const afm::server::CompletionMeta meta{"chatcmpl-f", 0, p.model};
  (void)dump(afm::server::completion_json(meta, r));
  const afm::server::SseEncoder enc(meta, p.include_usage);
  (void)(enc.start() + enc.content(r.text) + enc.finish(r));
}

void text(std::string_view body) {
  const afm::server::ParsedTextRequest t = afm::server::parse_text_completion_request(body, 1);
  afm::ChatResult r;
  r.prompt_text = t.request.chat.text_prompt->text;
  r.text = r.prompt_text;
  r.finish_reason = "length";
  for (size_t i = 0; i < r.text.size(); i += 3) {  // 3-byte "tokens": some split characters
    afm::ChatLogprob l{{r.text.substr(i, 3), i == 0 ? std::numeric_limits<float>::quiet_NaN()
                                                   : -static_cast<float>(i)},
                       {{r.text.substr(i, 2), -1.0f}}};
    r.prompt_logprobs.push_back(l);
    r.logprobs.push_back(l);
  }
  const afm::server::CompletionMeta meta{"cmpl-f", 0, t.request.model};
  (void)dump(afm::server::text_completion_json(meta, r, t.echo, true));
  afm::server::TextSseEncoder enc(meta, t.request.include_usage, true);
  (void)(enc.start() + enc.content(r.text, r.logprobs) + enc.finish(r));
}

// The tokenizer routes' bodies, with a stand-in tokenizer (one id per byte).
void tokenizer_routes(std::string_view body) {
  afm::server::ServedTokenizer t;
  t.encode = [](std::string_view text, bool) { return std::vector<int32_t>(text.begin(), text.end()); };
  t.decode = [](std::span<const int32_t> ids) { return std::string(ids.size(), 'x'); };
  t.vocab_size = 256;
  (void)dump(afm::server::tokenize_response(t, body));
  (void)dump(afm::server::detokenize_response(t, body));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  for (void (*parse)(std::string_view) : {chat, text, tokenizer_routes}) {
    try {
      parse(body);
    } catch (const afm::server::ApiError& e) {
      (void)e.to_json().dump();
    }
  }
  return 0;
}
