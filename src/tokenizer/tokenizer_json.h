// Reads a Hugging Face tokenizer.json (+ tokenizer_config.json) into a VocabSpec.
//
// Supported: model BPE (merges as "a b" strings or [a, b] pairs, byte_fallback, unk_token,
// ignore_merges); pre-tokenizers ByteLevel, Sequence[Split(Regex, Isolated), ByteLevel] and
// Metaspace; normalizers none or the SentencePiece pair Prepend("▁") + Replace(" ", "▁");
// added tokens without lstrip/rstrip/single_word; TemplateProcessing that prepends BOS.
// Anything else throws Error(kUnsupported) naming it and its JSON pointer, so afm never
// tokenizes differently from the source silently. Malformed JSON is Error(kFormat).
#pragma once

#include <string>

#include "tokenizer/vocab_spec.h"

namespace afm::tokenizer {

VocabSpec parse_tokenizer_json(const std::string& tokenizer_json,
                               const std::string& tokenizer_config_json);

}  // namespace afm::tokenizer
