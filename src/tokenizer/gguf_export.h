// Writes a Hugging Face tokenizer as llama.cpp-compatible GGUF `tokenizer.*` metadata.
#pragma once

#include <string>

#include "gguf/writer.h"

namespace afm::tokenizer {

// Adds tokenizer.ggml.{model, pre, tokens, token_type, merges or scores, bos/eos/unknown/padding
// ids, add_bos_token, add_eos_token} and tokenizer.chat_template, derived from the text of an HF
// tokenizer.json and tokenizer_config.json (may be empty). The `pre` name is one llama.cpp knows
// for the pre-tokenizer found, so llama.cpp and afm tokenize the file the same way.
// Throws afm::Error naming the problem (unsupported model/pre-tokenizer, malformed JSON).
void add_gguf_tokenizer_metadata(const std::string& tokenizer_json_text,
                                 const std::string& tokenizer_config_json_text,
                                 gguf::Writer& writer);

}  // namespace afm::tokenizer
