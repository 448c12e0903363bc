// Writes a byte-level BPE VocabSpec as Hugging Face files: tokenizer.json (model BPE with vocab
// and merges, pre-tokenizer Sequence[Split(Regex, Isolated), ByteLevel(use_regex=false)],
// ByteLevel decoder, added tokens) and tokenizer_config.json (eos/bos ids, no BOS/EOS added).
// Both load in HF `tokenizers` / `transformers` and in parse_tokenizer_json unchanged.
//
// Contract: only ModelKind::kByteLevelBpe with one pre_regex (no pre_regex_stages); anything
// else is Error(kUnsupported). Token strings that are not valid UTF-8 are
// Error(kInvalidArgument).
#pragma once

#include <string>

#include "tokenizer/vocab_spec.h"

namespace afm::tokenizer {

std::string to_tokenizer_json(const VocabSpec& spec);
std::string to_tokenizer_config_json(const VocabSpec& spec);

}  // namespace afm::tokenizer
