// OpenAI's legacy text completions (POST /v1/completions) <-> afm::ChatRequest with a
// TextPrompt / afm::ChatResult: the endpoint scoring tools use (lm-eval's loglikelihood tasks
// send context + continuation with echo and logprobs, and read the prompt's log-probabilities).
//
// Request: `prompt` is a string, an array of token ids, or an array holding one of those (one
// prompt per request: more is a 400 like n > 1); `max_tokens` defaults to 16, as OpenAI's, and
// may be 0 (score the prompt only); `logprobs` is an integer 0-20 (OpenAI allows 0-5): the
// sampled token's log-probability plus that many alternatives; `echo` puts the prompt in front
// of the answer (and, with logprobs, its tokens' log-probabilities: the first token of a prompt
// without BOS has none, null, as OpenAI reports). A string prompt is tokenized with the model's
// BOS rule and special-token text; token ids are used exactly as given. `suffix` and
// `best_of` > 1 are a 400 unsupported_parameter; `echo` with `stream` is a 400 too (the prompt's
// text and scores are known only once the whole prompt is evaluated, so they would not stream).
// The common fields (sampling, stop, stream, stream_options) are parse_common_fields'.
//
// Response: a text_completion object whose choice has text, logprobs {tokens, token_logprobs,
// top_logprobs, text_offset} or null, and finish_reason; streamed, text_completion chunks of
// the same shape, a final chunk with finish_reason, the usage chunk when asked, then [DONE].
// A token that is not whole UTF-8 shows as "bytes:\xNN..." in tokens and top_logprobs, as
// OpenAI shows it; text_offset counts characters (code points) of the returned text.
// Thread safety: all functions are reentrant; TextSseEncoder is one per response.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "server/openai_protocol.h"

namespace afm::server {

struct ParsedTextRequest {
  ParsedRequest request;  // request.chat.text_prompt is set
  bool echo = false;
};

// Throws ApiError (400) naming the parameter; never any other exception.
ParsedTextRequest parse_text_completion_request(std::string_view body, uint64_t default_seed);

// The non-streamed text_completion object. echo: the request's echo; logprobs: whether the
// request asked for them (choice.logprobs is null otherwise).
nlohmann::ordered_json text_completion_json(const CompletionMeta& meta, const ChatResult& result,
                                            bool echo, bool logprobs);

// Produces the text of one streamed text completion, event by event (no echo: see above).
class TextSseEncoder {
 public:
  TextSseEncoder(CompletionMeta meta, bool include_usage, bool logprobs);
  // Nothing: a text completion stream has no role chunk (kept for the shared handler).
  std::string start() const { return {}; }
  // A chunk with this text and the log-probabilities of the tokens it begins; "" for no text.
  std::string content(std::string_view text, const std::vector<ChatLogprob>& logprobs = {});
  // The finish_reason chunk, the usage chunk (when asked) and [DONE].
  std::string finish(const ChatResult& result) const;

 private:
  nlohmann::ordered_json chunk(std::string text, const nlohmann::ordered_json& finish,
                               nlohmann::ordered_json logprobs) const;
  CompletionMeta meta_;
  bool include_usage_;
  bool logprobs_;
  int64_t chars_sent_ = 0;  // text_offset of the next chunk's first token
};

}  // namespace afm::server
