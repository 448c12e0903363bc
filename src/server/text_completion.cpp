#include "server/text_completion.h"

#include <cmath>
#include <cstdio>
#include <utility>

#include "base/utf8.h"
#include "server/request_fields.h"

namespace afm::server {
namespace {

using namespace fields;  // NOLINT: the typed accessors are this file's vocabulary

// Token ids: every element an integer in [0, 2^31).
std::vector<int32_t> token_ids(const Json& array, const std::string& param) {
  std::vector<int32_t> ids;
  ids.reserve(array.size());
  for (size_t i = 0; i < array.size(); ++i) {
    const std::string p = param + "[" + std::to_string(i) + "]";
    const int64_t id = as_integer(array[i], p);
    if (id < 0 || id > INT32_MAX) bad_value(p, p + " must be a token id, got " + std::to_string(id));
    ids.push_back(static_cast<int32_t>(id));
  }
  return ids;
}

// One prompt: "text", [ids], or a one-element array of either.
TextPrompt parse_prompt(const Json& body) {
  const Json* prompt = member(body, "prompt");
  if (!prompt) {
    throw invalid_request("Missing required parameter: 'prompt'.", "prompt",
                          "missing_required_parameter");
  }
  TextPrompt out;
  if (prompt->is_string()) {
    out.text = prompt->get<std::string>();
    return out;
  }
  if (!prompt->is_array()) {
    wrong_type("prompt", "a string, an array of token ids or an array of one of those", *prompt);
  }
  if (prompt->empty()) bad_value("prompt", "prompt must not be an empty array");
  const Json& first = (*prompt)[0];
  if (first.is_string() || first.is_array()) {  // a batch of prompts
    if (prompt->size() != 1) {
      unsupported("prompt", "prompt holds " + std::to_string(prompt->size()) +
                                " prompts: afm completes one prompt per request");
    }
    if (first.is_string()) {
      out.text = first.get<std::string>();
    } else {
      if (first.empty()) bad_value("prompt[0]", "prompt[0] must not be an empty array");
      out.tokens = token_ids(first, "prompt[0]");
    }
    return out;
  }
  out.tokens = token_ids(*prompt, "prompt");
  return out;
}

void parse_text_fields(const Json& body, ParsedTextRequest& out) {
  ChatRequest& chat = out.request.chat;
  chat.text_prompt = parse_prompt(body);
  chat.max_tokens = 16;  // OpenAI's default for text completions
  if (const Json* m = member(body, "max_tokens")) {
    chat.max_tokens = as_integer(*m, "max_tokens");
    if (chat.max_tokens < 0) {
      bad_value("max_tokens", "max_tokens must be at least 0, got " + std::to_string(chat.max_tokens));
    }
  }
  if (const Json* l = member(body, "logprobs")) {
    const int64_t n = as_integer(*l, "logprobs");
    if (n < 0 || n > 20) {
      bad_value("logprobs", "logprobs must be between 0 and 20, got " + std::to_string(n));
    }
    chat.logprobs_top = static_cast<int>(n);
  }
  if (const Json* e = member(body, "echo")) out.echo = as_bool(*e, "echo");
  if (out.echo && chat.logprobs_top >= 0) chat.text_prompt->logprobs_top = chat.logprobs_top;
  if (out.echo && out.request.stream) {
    unsupported("echo", "echo is not supported with stream: send the request without stream");
  }
  if (const Json* s = member(body, "suffix"); s && !as_string(*s, "suffix").empty()) {
    unsupported("suffix", "suffix is not supported: afm models complete text left to right");
  }
  if (const Json* b = member(body, "best_of"); b && as_integer(*b, "best_of") != 1) {
    unsupported("best_of", "best_of must be 1: afm generates one choice per request");
  }
}

// How a token's bytes show in tokens / top_logprobs: the text, or "bytes:\xNN..." when it is
// not whole UTF-8 (OpenAI's spelling for such tokens).
std::string token_text(const std::string& bytes) {
  if (is_valid_utf8(bytes)) return bytes;
  std::string out = "bytes:";
  for (unsigned char c : bytes) {
    char hex[5];
    std::snprintf(hex, sizeof hex, "\\x%02x", c);
    out += hex;
  }
  return out;
}

// Code points that begin in `bytes` (a token may hold part of a character: its lead byte
// counts where it sits).
int64_t code_points(std::string_view bytes) {
  int64_t n = 0;
  for (unsigned char c : bytes) n += (c & 0xC0) != 0x80;
  return n;
}

// OpenAI's legacy logprobs object for `entries`, whose first token starts `offset` characters
// into the returned text; a NaN log-probability (a prompt's first token) is null.
Json legacy_logprobs_json(const std::vector<ChatLogprob>& entries, int64_t offset) {
  Json tokens = Json::array(), token_logprobs = Json::array(), top = Json::array(),
       offsets = Json::array();
  for (const ChatLogprob& e : entries) {
    tokens.push_back(token_text(e.chosen.bytes));
    const bool scored = !std::isnan(e.chosen.logprob);
    token_logprobs.push_back(scored ? Json(e.chosen.logprob) : Json());
    Json alternatives = Json::object();
    for (const ChatTokenLogprob& t : e.top) {
      const std::string key = token_text(t.bytes);
      if (!alternatives.contains(key)) alternatives[key] = t.logprob;  // most likely first wins
    }
    top.push_back(scored ? std::move(alternatives) : Json());
    offsets.push_back(offset);
    offset += code_points(e.chosen.bytes);
  }
  return Json{{"tokens", std::move(tokens)},
              {"token_logprobs", std::move(token_logprobs)},
              {"top_logprobs", std::move(top)},
              {"text_offset", std::move(offsets)}};
}

Json text_completion_object(const CompletionMeta& meta, Json choices) {
  Json out;
  out["id"] = meta.id;
  out["object"] = "text_completion";
  out["created"] = meta.created;
  out["model"] = meta.model;
  out["choices"] = std::move(choices);
  out["system_fingerprint"] = nullptr;
  return out;
}

Json choice_json(std::string text, Json logprobs, Json finish) {
  Json choice;
  choice["text"] = std::move(text);
  choice["index"] = 0;
  choice["logprobs"] = std::move(logprobs);
  choice["finish_reason"] = std::move(finish);
  return choice;
}

}  // namespace

ParsedTextRequest parse_text_completion_request(std::string_view body, uint64_t default_seed) {
  const Json doc = parse_json_body(body);
  ParsedTextRequest out;
  parse_common_fields(doc, out.request, default_seed);
  parse_text_fields(doc, out);
  return out;
}

Json text_completion_json(const CompletionMeta& meta, const ChatResult& result, bool echo,
                          bool logprobs) {
  Json lp;
  if (logprobs) {
    std::vector<ChatLogprob> entries;
    if (echo) entries = result.prompt_logprobs;
    entries.insert(entries.end(), result.logprobs.begin(), result.logprobs.end());
    // The token that ended the text counts as generated, as OpenAI and vLLM report it
    // (lm-eval reads the prompt's scores as everything before the last entry).
    if (result.end_logprob) entries.push_back(*result.end_logprob);
    lp = legacy_logprobs_json(entries, 0);
  }
  Json out = text_completion_object(
      meta, Json::array({choice_json((echo ? result.prompt_text : "") + result.text, std::move(lp),
                                     client_finish_reason(result))}));
  out["usage"] = usage_json(result);
  out["timings"] = timings_json(result);
  return out;
}

TextSseEncoder::TextSseEncoder(CompletionMeta meta, bool include_usage, bool logprobs)
    : meta_(std::move(meta)), include_usage_(include_usage), logprobs_(logprobs) {}

Json TextSseEncoder::chunk(std::string text, const Json& finish, Json logprobs) const {
  Json out = text_completion_object(
      meta_, Json::array({choice_json(std::move(text), std::move(logprobs), finish)}));
  // With include_usage every chunk carries "usage": null except the last, as OpenAI does.
  if (include_usage_) out["usage"] = nullptr;
  return out;
}

std::string TextSseEncoder::content(std::string_view text, const std::vector<ChatLogprob>& logprobs) {
  if (text.empty()) return {};
  Json lp = logprobs_ ? legacy_logprobs_json(logprobs, chars_sent_) : Json();
  chars_sent_ += code_points(text);
  return sse_data(chunk(std::string(text), nullptr, std::move(lp)));
}

std::string TextSseEncoder::finish(const ChatResult& result) const {
  Json lp;
  if (logprobs_ && result.end_logprob) lp = legacy_logprobs_json({*result.end_logprob}, chars_sent_);
  Json last = chunk("", client_finish_reason(result), std::move(lp));
  last["timings"] = timings_json(result);
  std::string out = sse_data(last);
  if (include_usage_) {
    Json usage = text_completion_object(meta_, Json::array());
    usage["usage"] = usage_json(result);
    out += sse_data(usage);
  }
  out += kSseDone;
  return out;
}

}  // namespace afm::server
