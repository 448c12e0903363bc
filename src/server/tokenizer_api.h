// The tokenizer endpoints vLLM and llama-server offer, which scoring tools use to count and
// cut tokens the way the server does (lm-eval's `tokenizer_backend=remote`):
//   POST /tokenize     {"prompt" | "content": text, "add_special_tokens" | "add_special": bool}
//                      -> {"tokens": [ids], "count": n, "max_model_len": context}
//   POST /detokenize   {"tokens": [ids]} -> {"prompt": text, "content": text}
//   GET  /tokenizer_info -> {"bos_token", "eos_token", "pad_token", "chat_template",
//                            "model_max_length", "tokenizer_class"}
// Both spellings of each request field are accepted (vLLM's first); answers carry both. A
// "model" field may name the served model and is otherwise ignored: every id of one server
// shares the tokenizer. Special-token text in a prompt becomes that token, as Hugging Face
// tokenizers do; add_special_tokens adds the model's BOS when it uses one (vLLM's default: true;
// llama-server's add_special: false).
// Thread safety: the functions are reentrant; the ServedTokenizer's functions must be thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace afm::server {

// The served model's tokenizer, as the server sees it (the engine stays behind functions).
struct ServedTokenizer {
  // text -> ids; add_bos: prepend the model's BOS when it has one and uses it.
  std::function<std::vector<int32_t>(std::string_view text, bool add_bos)> encode;
  // ids (each checked against vocab_size first) -> text.
  std::function<std::string(std::span<const int32_t> ids)> decode;
  int64_t vocab_size = 0;
  int64_t context = 0;  // tokens per request (the slot's context)
  std::string bos_token, eos_token, pad_token, chat_template;  // "" when the model has none
};

// Each returns the response body or throws ApiError (400) naming the parameter.
nlohmann::ordered_json tokenize_response(const ServedTokenizer& tokenizer, std::string_view body);
nlohmann::ordered_json detokenize_response(const ServedTokenizer& tokenizer, std::string_view body);
nlohmann::ordered_json tokenizer_info_response(const ServedTokenizer& tokenizer);

}  // namespace afm::server
