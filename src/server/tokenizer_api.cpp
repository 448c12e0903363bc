#include "server/tokenizer_api.h"

#include "server/openai_protocol.h"
#include "server/request_fields.h"

namespace afm::server {
namespace {

using namespace fields;  // NOLINT: the typed accessors are this file's vocabulary

const Json& request_object(const Json& body) {
  if (!body.is_object()) wrong_type("body", "an object", body);
  return body;
}

// The first of `keys` present in `obj`, or nullptr.
const Json* either(const Json& obj, const char* a, const char* b) {
  if (const Json* v = member(obj, a)) return v;
  return member(obj, b);
}

Json or_null(const std::string& s) { return s.empty() ? Json() : Json(s); }

}  // namespace

Json tokenize_response(const ServedTokenizer& tokenizer, std::string_view body) {
  const Json doc = parse_json_body(body);
  const Json& req = request_object(doc);
  if (member(req, "messages")) {
    unsupported("messages", "messages is not supported: tokenize the rendered prompt");
  }
  const Json* text = either(req, "prompt", "content");
  if (!text) {
    throw invalid_request("Missing required parameter: 'prompt'.", "prompt",
                          "missing_required_parameter");
  }
  const std::string& prompt = as_string(*text, member(req, "prompt") ? "prompt" : "content");
  bool add_bos = member(req, "prompt") != nullptr;  // vLLM's default; llama-server's is false
  if (const Json* a = member(req, "add_special_tokens")) add_bos = as_bool(*a, "add_special_tokens");
  else if (const Json* a = member(req, "add_special")) add_bos = as_bool(*a, "add_special");
  const std::vector<int32_t> ids = tokenizer.encode(prompt, add_bos);
  return Json{{"tokens", ids}, {"count", ids.size()}, {"max_model_len", tokenizer.context}};
}

Json detokenize_response(const ServedTokenizer& tokenizer, std::string_view body) {
  const Json doc = parse_json_body(body);
  const Json& req = request_object(doc);
  const Json& tokens = as_array(required(req, "tokens", "tokens"), "tokens");
  std::vector<int32_t> ids;
  ids.reserve(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string p = "tokens[" + std::to_string(i) + "]";
    const int64_t id = as_integer(tokens[i], p);
    if (id < 0 || id >= tokenizer.vocab_size) {
      bad_value(p, p + " is " + std::to_string(id) + ", outside the vocabulary [0, " +
                       std::to_string(tokenizer.vocab_size) + ")");
    }
    ids.push_back(static_cast<int32_t>(id));
  }
  const std::string text = tokenizer.decode(ids);
  return Json{{"prompt", text}, {"content", text}};
}

Json tokenizer_info_response(const ServedTokenizer& tokenizer) {
  return Json{{"tokenizer_class", "afm"},
              {"bos_token", or_null(tokenizer.bos_token)},
              {"eos_token", or_null(tokenizer.eos_token)},
              {"pad_token", or_null(tokenizer.pad_token)},
              {"chat_template", or_null(tokenizer.chat_template)},
              {"model_max_length", tokenizer.context},
              {"vocab_size", tokenizer.vocab_size}};
}

}  // namespace afm::server
