#include "tokenizer/vocab_spec.h"

#include "base/error.h"

namespace afm::tokenizer {

const std::vector<PreTokenizerName>& known_pre_tokenizers() {
  static const std::vector<PreTokenizerName> kNames = {
      {"gpt-2", R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)"},
      {"llama-bpe",
       R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
      {"qwen2",
       R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
  };
  return kNames;
}

std::string pre_regex_for_name(const std::string& name) {
  for (const PreTokenizerName& p : known_pre_tokenizers()) {
    if (name == p.name) return p.regex;
  }
  throw_error(ErrorCode::kUnsupported,
              "tokenizer.ggml.pre '" + name + "' is not supported (gpt-2, llama-bpe, qwen2)");
}

std::string pre_name_for_regex(const std::string& regex) {
  for (const PreTokenizerName& p : known_pre_tokenizers()) {
    if (regex == p.regex) return p.name;
  }
  throw_error(ErrorCode::kUnsupported, "pre-tokenizer regex /" + regex +
                                           "/ is not one afm and llama.cpp both know "
                                           "(GPT-2, Llama-3, Qwen2)");
}

}  // namespace afm::tokenizer
