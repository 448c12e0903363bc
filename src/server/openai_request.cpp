// Request side of openai_protocol.h: JSON body -> ParsedRequest, with OpenAI-style 400s.
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "base/json_parse.h"
#include "server/openai_protocol.h"
#include "server/request_fields.h"

namespace afm::server {
namespace {

using namespace fields;  // NOLINT: the typed accessors are this file's vocabulary

// "string" or [{"type": "text", "text": ...}, ...]; parts are joined with newlines.
std::string content_text(const Json& content, const std::string& param) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) wrong_type(param, "a string or an array of content parts", content);
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const std::string p = param + "[" + std::to_string(i) + "]";
    const Json& part = as_object(content[i], p);
    const std::string& type = as_string(required(part, "type", p + ".type"), p + ".type");
    if (type != "text" && type != "refusal") {
      throw invalid_request(
          p + ".type '" + type + "' is not supported: afm models read text parts only", p + ".type",
          "unsupported_value");
    }
    const std::string key = type == "text" ? "text" : "refusal";
    if (i > 0) text += "\n";
    text += as_string(required(part, key.c_str(), p + "." + key), p + "." + key);
  }
  return text;
}

ToolCall parse_tool_call(const Json& call, const std::string& p) {
  as_object(call, p);
  ToolCall out;
  out.id = as_string(required(call, "id", p + ".id"), p + ".id");
  if (const Json* t = member(call, "type"); t && as_string(*t, p + ".type") != "function") {
    bad_value(p + ".type", p + ".type must be 'function'");
  }
  const Json& fn = as_object(required(call, "function", p + ".function"), p + ".function");
  out.name = as_string(required(fn, "name", p + ".function.name"), p + ".function.name");
  const std::string ap = p + ".function.arguments";
  const std::string& text = as_string(required(fn, "arguments", ap), ap);
  // OpenAI sends arguments as JSON text; the template writes them back as JSON.
  ParsedJson args = parse_ordered_json(text, kMaxJsonDepth);
  if (!args.ok() || !args.value.is_object()) {
    bad_value(ap, ap + " must be a JSON object encoded as a string");
  }
  out.arguments = std::move(args.value);
  return out;
}

std::vector<ChatMessage> parse_messages(const Json& body) {
  const Json& messages = as_array(required(body, "messages", "messages"), "messages");
  if (messages.empty()) bad_value("messages", "messages must contain at least one message");
  std::vector<ChatMessage> out;
  std::unordered_map<std::string, std::string> call_names;  // tool_call_id -> tool name
  for (size_t i = 0; i < messages.size(); ++i) {
    const std::string p = "messages[" + std::to_string(i) + "]";
    const Json& m = as_object(messages[i], p);
    const std::string& role = as_string(required(m, "role", p + ".role"), p + ".role");
    ChatMessage msg;
    msg.role = role == "developer" ? "system" : role;
    const Json* content = member(m, "content");
    if (role == "system" || role == "developer" || role == "user") {
      msg.content = content_text(required(m, "content", p + ".content"), p + ".content");
    } else if (role == "assistant") {
      if (content) msg.content = content_text(*content, p + ".content");
      if (const Json* calls = member(m, "tool_calls")) {
        as_array(*calls, p + ".tool_calls");
        for (size_t j = 0; j < calls->size(); ++j) {
          msg.tool_calls.push_back(
              parse_tool_call((*calls)[j], p + ".tool_calls[" + std::to_string(j) + "]"));
          call_names[msg.tool_calls.back().id] = msg.tool_calls.back().name;
        }
      }
      if (!content && msg.tool_calls.empty()) {
        throw invalid_request("Missing required parameter: '" + p + ".content'.", p + ".content",
                              "missing_required_parameter");
      }
      if (member(m, "function_call")) {
        unsupported(p + ".function_call", p + ".function_call is deprecated: use tool_calls");
      }
    } else if (role == "tool") {
      msg.content = content_text(required(m, "content", p + ".content"), p + ".content");
      const std::string ip = p + ".tool_call_id";
      const std::string& id = as_string(required(m, "tool_call_id", ip), ip);
      auto it = call_names.find(id);
      if (it == call_names.end()) {
        bad_value(ip,
                  ip + " '" + id + "' does not match a tool call of an earlier assistant message");
      }
      msg.tool_name = it->second;
    } else if (role == "function") {
      unsupported(p + ".role", p + ".role 'function' is deprecated: use 'tool'");
    } else {
      bad_value(p + ".role", p +
                                 ".role must be one of 'system', 'developer', 'user', "
                                 "'assistant', 'tool', got '" +
                                 role + "'");
    }
    out.push_back(std::move(msg));
  }
  return out;
}

void parse_tools(const Json& body, ChatRequest& chat) {
  if (const Json* tools = member(body, "tools")) {
    as_array(*tools, "tools");
    std::unordered_set<std::string> names;
    for (size_t i = 0; i < tools->size(); ++i) {
      const std::string p = "tools[" + std::to_string(i) + "]";
      const Json& t = as_object((*tools)[i], p);
      const std::string& type = as_string(required(t, "type", p + ".type"), p + ".type");
      if (type != "function") {
        throw invalid_request(p + ".type '" + type + "' is not supported: only 'function'",
                              p + ".type", "unsupported_value");
      }
      const Json& fn = as_object(required(t, "function", p + ".function"), p + ".function");
      ChatToolSpec spec;
      spec.name = as_string(required(fn, "name", p + ".function.name"), p + ".function.name");
      if (!valid_name(spec.name)) {
        bad_value(p + ".function.name", p +
                                            ".function.name must be 1-64 characters of "
                                            "a-z, A-Z, 0-9, '_' and '-', got '" +
                                            spec.name + "'");
      }
      if (!names.insert(spec.name).second) {
        bad_value(p + ".function.name", "tools: duplicate function name '" + spec.name + "'");
      }
      if (const Json* d = member(fn, "description"))
        spec.description = as_string(*d, p + ".function.description");
      if (const Json* s = member(fn, "strict")) as_bool(*s, p + ".function.strict");
      if (const Json* params = member(fn, "parameters")) {
        spec.parameters = as_object(*params, p + ".function.parameters");
      } else {
        // OpenAI: omitting parameters defines a function with an empty parameter list.
        spec.parameters = {
            {"type", "object"}, {"properties", Json::object()}, {"additionalProperties", false}};
      }
      chat.tools.push_back(std::move(spec));
    }
  }
  if (const Json* choice = member(body, "tool_choice")) {
    if (choice->is_string()) {
      const std::string& c = choice->get_ref<const std::string&>();
      if (c == "auto")
        chat.tool_choice = ToolChoice::kAuto;
      else if (c == "none")
        chat.tool_choice = ToolChoice::kNone;
      else if (c == "required")
        chat.tool_choice = ToolChoice::kRequired;
      else
        bad_value("tool_choice",
                  "tool_choice must be 'none', 'auto', 'required' or a named "
                  "function, got '" +
                      c + "'");
    } else if (choice->is_object()) {
      const std::string& type =
          as_string(required(*choice, "type", "tool_choice.type"), "tool_choice.type");
      if (type != "function") {
        throw invalid_request("tool_choice.type '" + type + "' is not supported: only 'function'",
                              "tool_choice.type", "unsupported_value");
      }
      const Json& fn =
          as_object(required(*choice, "function", "tool_choice.function"), "tool_choice.function");
      chat.tool_name =
          as_string(required(fn, "name", "tool_choice.function.name"), "tool_choice.function.name");
      chat.tool_choice = ToolChoice::kNamed;
      bool declared = false;
      for (const ChatToolSpec& t : chat.tools) declared |= t.name == chat.tool_name;
      if (!declared) {
        bad_value("tool_choice",
                  "tool_choice names function '" + chat.tool_name + "', which is not in tools");
      }
    } else {
      wrong_type("tool_choice", "a string or an object", *choice);
    }
    if (chat.tools.empty() && chat.tool_choice != ToolChoice::kNone &&
        chat.tool_choice != ToolChoice::kAuto) {
      bad_value("tool_choice", "tool_choice is only allowed when tools are specified");
    }
  }
  if (const Json* p = member(body, "parallel_tool_calls")) {
    chat.parallel_tool_calls = as_bool(*p, "parallel_tool_calls");
  }
}

void parse_response_format(const Json& body, ChatRequest& chat) {
  const Json* rf = member(body, "response_format");
  if (!rf) return;
  as_object(*rf, "response_format");
  const std::string& type =
      as_string(required(*rf, "type", "response_format.type"), "response_format.type");
  if (type == "text") return;
  if (type == "json_object") {
    chat.response_schema = Json{{"type", "object"}};
    return;
  }
  if (type != "json_schema") {
    bad_value("response_format.type",
              "response_format.type must be 'text', 'json_object' or "
              "'json_schema', got '" +
                  type + "'");
  }
  const std::string p = "response_format.json_schema";
  const Json& js = as_object(required(*rf, "json_schema", p), p);
  chat.response_name = as_string(required(js, "name", p + ".name"), p + ".name");
  if (!valid_name(chat.response_name)) {
    bad_value(p + ".name", p + ".name must be 1-64 characters of a-z, A-Z, 0-9, '_' and '-'");
  }
  if (const Json* d = member(js, "description"))
    chat.response_description = as_string(*d, p + ".description");
  if (const Json* s = member(js, "strict")) as_bool(*s, p + ".strict");
  const Json* schema = member(js, "schema");
  // Strict or not, afm enforces the schema (it fails closed on keywords it cannot enforce).
  chat.response_schema = schema ? as_object(*schema, p + ".schema") : Json::object();
}

void parse_sampling(const Json& body, ParsedRequest& out, uint64_t default_seed) {
  sample::SamplerConfig& s = out.chat.sampling;
  s.temperature = 1.0f;  // OpenAI's defaults: plain temperature sampling, nothing cut
  s.top_k = 0;
  s.top_p = 1.0f;
  s.min_p = 0.0f;
  s.repeat_penalty = 1.0f;
  s.seed = default_seed;
  if (member(body, "temperature"))
    s.temperature = static_cast<float>(number_in(body, "temperature", 0, 2));
  if (member(body, "top_p")) {
    const double p = number_in(body, "top_p", 0, 1);
    if (p == 0)
      s.temperature = 0;  // only the most likely token survives: greedy
    else
      s.top_p = static_cast<float>(p);
  }
  if (member(body, "presence_penalty"))
    s.presence_penalty = static_cast<float>(number_in(body, "presence_penalty", -2, 2));
  if (member(body, "frequency_penalty"))
    s.frequency_penalty = static_cast<float>(number_in(body, "frequency_penalty", -2, 2));
  if (s.presence_penalty != 0 || s.frequency_penalty != 0) s.repeat_last_n = -1;
  if (const Json* seed = member(body, "seed"))
    s.seed = static_cast<uint64_t>(as_integer(*seed, "seed"));
}

void parse_max_tokens(const Json& body, ParsedRequest& out) {
  for (const char* key : {"max_tokens", "max_completion_tokens"}) {
    if (const Json* m = member(body, key)) {
      const int64_t n = as_integer(*m, key);
      if (n < 1) bad_value(key, std::string(key) + " must be at least 1, got " + std::to_string(n));
      out.chat.max_tokens = n;  // max_completion_tokens (the newer name) wins when both are set
    }
  }
}

// logprobs: true reports every answer token's log-probability; top_logprobs (0-20, OpenAI's
// range) adds that many alternatives and needs logprobs: true, as OpenAI requires.
void parse_logprobs(const Json& body, ParsedRequest& out) {
  const Json* l = member(body, "logprobs");
  const bool on = l && as_bool(*l, "logprobs");
  int64_t top = 0;
  if (const Json* t = member(body, "top_logprobs")) {
    top = as_integer(*t, "top_logprobs");
    if (top < 0 || top > 20) {
      bad_value("top_logprobs",
                "top_logprobs must be between 0 and 20, got " + std::to_string(top));
    }
    if (!on) bad_value("top_logprobs", "top_logprobs needs logprobs: true");
  }
  if (on) out.chat.logprobs_top = static_cast<int>(top);
}

void parse_stop(const Json& body, ParsedRequest& out) {
  const Json* stop = member(body, "stop");
  if (!stop) return;
  if (stop->is_string()) {
    out.stop.push_back(stop->get<std::string>());
  } else if (stop->is_array()) {
    if (stop->size() > kMaxStopSequences) bad_value("stop", "stop holds at most 4 sequences");
    for (size_t i = 0; i < stop->size(); ++i) {
      out.stop.push_back(as_string((*stop)[i], "stop[" + std::to_string(i) + "]"));
    }
  } else {
    wrong_type("stop", "a string or an array of strings", *stop);
  }
  for (const std::string& s : out.stop) {
    if (s.empty()) bad_value("stop", "stop sequences must not be empty");
  }
}

// Parameters whose non-default values afm does not implement: a clear 400, never ignored.
void reject_unsupported(const Json& body) {
  if (const Json* n = member(body, "n"); n && as_integer(*n, "n") != 1) {
    unsupported("n", "n must be 1: afm generates one choice per request");
  }
  if (const Json* b = member(body, "logit_bias"); b && !as_object(*b, "logit_bias").empty()) {
    unsupported("logit_bias", "logit_bias is not supported");
  }
  for (const char* key : {"functions", "function_call"}) {
    if (member(body, key))
      unsupported(key, std::string(key) + " is deprecated: use tools and tool_choice");
  }
  for (const char* key : {"audio", "prediction", "web_search_options"}) {
    if (member(body, key)) unsupported(key, std::string(key) + " is not supported");
  }
  if (const Json* m = member(body, "modalities")) {
    for (const Json& x : as_array(*m, "modalities")) {
      if (x != "text") unsupported("modalities", "modalities: afm produces text only");
    }
  }
}

}  // namespace

Json parse_json_body(std::string_view body) {
  // Linear in the body (ordered_json::parse is quadratic in an object's keys), and stops at
  // the depth limit without building the rest. kMaxJsonDepth levels below the top-level value.
  ParsedJson doc = parse_ordered_json(body, kMaxJsonDepth + 1);
  if (doc.status == JsonParseStatus::kTooDeep) {
    throw invalid_request("The request body nests deeper than " + std::to_string(kMaxJsonDepth) +
                          " levels.");
  }
  if (!doc.ok()) {
    throw invalid_request(
        "We could not parse the JSON body of your request. The OpenAI API "
        "expects a JSON payload.");
  }
  return std::move(doc.value);
}

void parse_common_fields(const Json& body, ParsedRequest& out, uint64_t default_seed) {
  if (!body.is_object()) wrong_type("body", "an object", body);
  // Optional, as llama-server and vLLM allow: the server fills in its one model (http_server).
  if (const Json* m = member(body, "model")) out.model = as_string(*m, "model");
  reject_unsupported(body);
  parse_sampling(body, out, default_seed);
  parse_stop(body, out);
  if (const Json* s = member(body, "stream")) out.stream = as_bool(*s, "stream");
  if (const Json* so = member(body, "stream_options")) {
    if (!out.stream) {
      bad_value("stream_options",
                "The 'stream_options' parameter is only allowed when 'stream' "
                "is enabled.");
    }
    if (const Json* u = member(as_object(*so, "stream_options"), "include_usage")) {
      out.include_usage = as_bool(*u, "stream_options.include_usage");
    }
  }
}

ParsedRequest parse_chat_request_json(const Json& body, uint64_t default_seed) {
  ParsedRequest out;
  parse_common_fields(body, out, default_seed);
  out.chat.messages = parse_messages(body);
  parse_tools(body, out.chat);
  parse_response_format(body, out.chat);
  parse_max_tokens(body, out);
  parse_logprobs(body, out);
  return out;
}

ParsedRequest parse_chat_request(std::string_view body, uint64_t default_seed) {
  return parse_chat_request_json(parse_json_body(body), default_seed);
}

}  // namespace afm::server
