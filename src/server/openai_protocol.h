// OpenAI chat-completions wire format <-> afm::ChatRequest / afm::ChatResult.
//
// Parsing (openai_request.cpp) follows OpenAI's API: harmless unknown fields are ignored,
// null means "not given", and every problem is an ApiError(400) whose message and `param`
// name the offending parameter ("messages[2].role", "temperature must be in [0, 2], got 3").
// Features afm does not implement (n > 1, logprobs, logit_bias, audio, images ...) are a 400
// with code "unsupported_parameter" / "unsupported_value" rather than being silently dropped.
// Sampling follows OpenAI's defaults (temperature 1, top_p 1, no top-k or min-p).
//
// Serializing (openai_response.cpp) writes chat.completion objects and the SSE stream of
// chat.completion.chunk objects: a role delta first, content deltas, one tool_calls delta per
// call at the end, a finish_reason chunk, the usage chunk when stream_options.include_usage,
// then "data: [DONE]".
// Thread safety: all functions are reentrant; SseEncoder is one per response.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "framework/chat_service.h"
#include "server/api_error.h"

namespace afm::server {

// Bodies nested deeper than this are rejected before building the document (schemas in real
// use are far shallower; unbounded depth would let one request exhaust a worker's stack).
inline constexpr int kMaxJsonDepth = 128;
inline constexpr size_t kMaxStopSequences = 4;

struct ParsedRequest {
  std::string model;
  ChatRequest chat;
  bool stream = false;
  bool include_usage = false;     // stream_options.include_usage
  std::vector<std::string> stop;  // stop sequences (not part of the answer)
};

// Parses a request body. `default_seed` is used when the request has no "seed".
// Throws ApiError (400) naming the parameter; never any other exception.
ParsedRequest parse_chat_request(std::string_view body, uint64_t default_seed);
ParsedRequest parse_chat_request_json(const nlohmann::ordered_json& body, uint64_t default_seed);

// The fields chat and text completions share: model, sampling (temperature, top_p, penalties,
// seed), stop, stream and stream_options, and the refusal of n > 1, logit_bias and the like.
// Throws ApiError (400) naming the parameter.
void parse_common_fields(const nlohmann::ordered_json& body, ParsedRequest& out,
                         uint64_t default_seed);

// Parses JSON text with the depth limit; ApiError(400) when it is not JSON.
nlohmann::ordered_json parse_json_body(std::string_view body);

struct CompletionMeta {
  std::string id;       // "chatcmpl-..."
  int64_t created = 0;  // Unix seconds
  std::string model;
};

// A fresh id ("<prefix><24 random characters>") and the current time.
CompletionMeta new_completion_meta(const std::string& model, const std::string& prefix = "chatcmpl-");

// The finish_reason a client sees ("cancelled" is reported as "stop": nobody is listening).
std::string client_finish_reason(const ChatResult& result);

nlohmann::ordered_json usage_json(const ChatResult& result);
// Server-side timings as llama-server reports them (prompt, generation, drafting).
nlohmann::ordered_json timings_json(const ChatResult& result);
// [{"id", "type": "function", "function": {"name", "arguments": "<JSON text>"}}]
nlohmann::ordered_json tool_calls_json(const std::vector<ToolCall>& calls);
// logprobs: whether the request asked for them (choice.logprobs is null otherwise).
nlohmann::ordered_json completion_json(const CompletionMeta& meta, const ChatResult& result,
                                       bool logprobs = false);

// "data: <compact JSON>\n\n"; invalid UTF-8 in strings is replaced, never thrown.
std::string sse_data(const nlohmann::ordered_json& value);
inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

// Produces the text of one streamed response, event by event.
class SseEncoder {
 public:
  // logprobs: whether the request asked for them (content chunks then carry
  // choice.logprobs.content for their tokens; every other chunk has null, as OpenAI sends).
  SseEncoder(CompletionMeta meta, bool include_usage, bool logprobs = false);
  // The first chunk: delta {"role": "assistant", "content": ""}.
  std::string start() const;
  // A content delta with the log-probabilities of the tokens it begins; "" for empty text.
  std::string content(std::string_view text, const std::vector<ChatLogprob>& logprobs = {}) const;
  // Tool-call deltas, the finish_reason chunk, the usage chunk (when asked) and [DONE].
  std::string finish(const ChatResult& result) const;
  // An error after the stream began: {"error": {...}} then [DONE].
  static std::string error(const ApiError& error);

 private:
  nlohmann::ordered_json chunk(nlohmann::ordered_json delta, const nlohmann::ordered_json& finish,
                               nlohmann::ordered_json logprobs = nullptr) const;
  CompletionMeta meta_;
  bool include_usage_;
  bool logprobs_;
};

}  // namespace afm::server
