// Response side of openai_protocol.h: ChatResult -> chat.completion and SSE chunks.
#include <chrono>
#include <random>
#include <utility>

#include "server/openai_protocol.h"

namespace afm::server {
namespace {

using Json = nlohmann::ordered_json;

std::string random_suffix(size_t n) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_int_distribution<size_t> pick(0, sizeof(kAlphabet) - 2);
  std::string s(n, ' ');
  for (char& c : s) c = kAlphabet[pick(rng)];
  return s;
}

}  // namespace

CompletionMeta new_completion_meta(const std::string& model, const std::string& prefix) {
  CompletionMeta meta;
  meta.id = prefix + random_suffix(24);
  meta.created = std::chrono::duration_cast<std::chrono::seconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
  meta.model = model;
  return meta;
}

std::string client_finish_reason(const ChatResult& result) {
  if (result.finish_reason == "cancelled" || result.finish_reason.empty()) return "stop";
  return result.finish_reason;
}

Json usage_json(const ChatResult& r) {
  Json u;
  u["prompt_tokens"] = r.prompt_tokens;
  u["completion_tokens"] = r.completion_tokens;
  u["total_tokens"] = r.prompt_tokens + r.completion_tokens;
  u["prompt_tokens_details"] = {{"cached_tokens", r.cached_prompt_tokens}};
  u["completion_tokens_details"] = {{"reasoning_tokens", 0}};
  return u;
}

// Server-side timings, as llama-server reports them (not part of OpenAI's schema; clients that
// do not know the field ignore it): prompt and generation time, and speculative drafting.
Json timings_json(const ChatResult& r) {
  const int64_t evaluated = r.prompt_tokens - r.cached_prompt_tokens;
  Json t;
  t["prompt_n"] = evaluated;
  t["prompt_ms"] = r.prefill_ms;
  t["predicted_n"] = r.completion_tokens;
  t["predicted_ms"] = r.decode_ms;
  t["predicted_per_second"] = r.decode_ms > 0 ? 1000.0 * r.completion_tokens / r.decode_ms : 0.0;
  t["mask_ms"] = r.mask_ms;  // afm's own: time in the grammar's token masks (guided decoding)
  if (r.speculation.rounds > 0 || r.speculation.proposed > 0) {
    t["draft_n"] = r.speculation.proposed;
    t["draft_n_accepted"] = r.speculation.accepted;
    t["forced_n_accepted"] = r.speculation.forced;
    t["verification_passes"] = r.speculation.rounds;
  }
  return t;
}

Json tool_calls_json(const std::vector<ToolCall>& calls) {
  Json out = Json::array();
  for (const ToolCall& c : calls) {
    Json call;
    call["id"] = c.id;
    call["type"] = "function";
    // OpenAI's API carries arguments as JSON text, not as an object.
    call["function"] = {
        {"name", c.name},
        {"arguments", c.arguments.dump(-1, ' ', false, Json::error_handler_t::replace)}};
    out.push_back(std::move(call));
  }
  return out;
}

namespace {

Json token_logprob_json(const ChatTokenLogprob& t) {
  Json bytes = Json::array();
  for (unsigned char c : t.bytes) bytes.push_back(static_cast<int>(c));
  // A token that is part of a UTF-8 character shows as U+FFFD in "token" (the dump replaces
  // it); "bytes" holds it exactly, as OpenAI's API does.
  return Json{{"token", t.bytes}, {"logprob", t.logprob}, {"bytes", std::move(bytes)}};
}

// OpenAI's choice.logprobs: {"content": [{token, logprob, bytes, top_logprobs}], "refusal"}.
Json logprobs_json(const std::vector<ChatLogprob>& logprobs, bool requested) {
  if (!requested) return nullptr;
  Json content = Json::array();
  for (const ChatLogprob& l : logprobs) {
    Json entry = token_logprob_json(l.chosen);
    Json top = Json::array();
    for (const ChatTokenLogprob& t : l.top) top.push_back(token_logprob_json(t));
    entry["top_logprobs"] = std::move(top);
    content.push_back(std::move(entry));
  }
  return Json{{"content", std::move(content)}, {"refusal", nullptr}};
}

}  // namespace

Json completion_json(const CompletionMeta& meta, const ChatResult& result, bool logprobs) {
  Json message;
  message["role"] = "assistant";
  message["content"] =
      result.text.empty() && !result.tool_calls.empty() ? Json() : Json(result.text);
  message["refusal"] = nullptr;
  if (!result.tool_calls.empty()) message["tool_calls"] = tool_calls_json(result.tool_calls);
  Json choice;
  choice["index"] = 0;
  choice["message"] = std::move(message);
  choice["logprobs"] = logprobs_json(result.logprobs, logprobs);
  choice["finish_reason"] = client_finish_reason(result);
  Json out;
  out["id"] = meta.id;
  out["object"] = "chat.completion";
  out["created"] = meta.created;
  out["model"] = meta.model;
  out["choices"] = Json::array({std::move(choice)});
  out["usage"] = usage_json(result);
  out["system_fingerprint"] = nullptr;
  out["timings"] = timings_json(result);
  return out;
}

std::string sse_data(const Json& value) {
  return "data: " + value.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n\n";
}

SseEncoder::SseEncoder(CompletionMeta meta, bool include_usage, bool logprobs)
    : meta_(std::move(meta)), include_usage_(include_usage), logprobs_(logprobs) {}

Json SseEncoder::chunk(Json delta, const Json& finish, Json logprobs) const {
  Json choice;
  choice["index"] = 0;
  choice["delta"] = std::move(delta);
  choice["logprobs"] = std::move(logprobs);
  choice["finish_reason"] = finish;
  Json out;
  out["id"] = meta_.id;
  out["object"] = "chat.completion.chunk";
  out["created"] = meta_.created;
  out["model"] = meta_.model;
  out["system_fingerprint"] = nullptr;
  out["choices"] = Json::array({std::move(choice)});
  // With include_usage every chunk carries "usage": null except the last, as OpenAI does.
  if (include_usage_) out["usage"] = nullptr;
  return out;
}

std::string SseEncoder::start() const {
  return sse_data(chunk({{"role", "assistant"}, {"content", ""}, {"refusal", nullptr}}, nullptr));
}

std::string SseEncoder::content(std::string_view text,
                                const std::vector<ChatLogprob>& logprobs) const {
  if (text.empty()) return {};
  return sse_data(
      chunk({{"content", std::string(text)}}, nullptr, logprobs_json(logprobs, logprobs_)));
}

std::string SseEncoder::finish(const ChatResult& result) const {
  std::string out;
  const Json calls = tool_calls_json(result.tool_calls);
  for (size_t i = 0; i < calls.size(); ++i) {
    Json call = calls[i];
    Json indexed;
    indexed["index"] = i;  // clients merge deltas of one call by index
    for (auto& [k, v] : call.items()) indexed[k] = v;
    out += sse_data(chunk({{"tool_calls", Json::array({std::move(indexed)})}}, nullptr));
  }
  Json finish = chunk(Json::object(), client_finish_reason(result));
  finish["timings"] = timings_json(result);
  out += sse_data(finish);
  if (include_usage_) {
    Json last = chunk(Json::object(), nullptr);
    last["choices"] = Json::array();
    last["usage"] = usage_json(result);
    out += sse_data(last);
  }
  out += kSseDone;
  return out;
}

std::string SseEncoder::error(const ApiError& error) {
  return sse_data(error.to_json()) + std::string(kSseDone);
}

}  // namespace afm::server
