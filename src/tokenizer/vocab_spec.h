// Everything that defines a tokenizer, independent of where it was loaded from (tokenizer.json
// or GGUF tokenizer.* keys). Tokenizer is built from this; gguf_export writes it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace afm::tokenizer {

enum class ModelKind {
  kByteLevelBpe,      // GPT-2 / Llama-3 / Qwen: bytes mapped to characters, regex pre-tokenizer
  kSentencePieceBpe,  // "▁" for spaces, byte fallback tokens <0xNN>, merges by rank
  kSentencePiece,     // GGUF "llama": "▁" for spaces, merges by token score (spm.h)
};

struct AddedToken {
  int32_t id;
  std::string content;
  bool special;  // control token (llama.cpp type 3) vs user-defined (type 4)
  // HF's "normalized": with a normalizer (prepend_always), matched in the normalized text by
  // its normalized content rather than in the raw text.
  bool normalized = false;
};

struct VocabSpec {
  ModelKind kind = ModelKind::kByteLevelBpe;
  std::vector<std::string> tokens;                          // by id, in the vocabulary's own form
  std::vector<std::pair<std::string, std::string>> merges;  // by rank
  std::vector<AddedToken> added;
  std::vector<float> scores;  // by id; kSentencePiece only (tokenizer.ggml.scores)
  std::string pre_name;       // llama.cpp's tokenizer.ggml.pre ("gpt-2", "llama-bpe", "qwen2", ...)
  std::string pre_regex;      // the regex that name stands for ("" for SentencePiece)
  // Names that split in several stages (deepseek-llm, falcon, starcoder, ...): every regex in
  // order, pre_regex being the first; each splits the pieces of the one before. Empty when
  // pre_regex alone is the pre-tokenizer. Such vocabularies load from GGUF only.
  std::vector<std::string> pre_regex_stages;
  // ByteLevel(add_prefix_space=True). SentencePiece kinds: "▁" before text segments (HF's
  // Metaspace / Prepend; GGUF tokenizer.ggml.add_space_prefix) that decode drops again.
  bool add_prefix_space = false;
  bool byte_fallback = false;
  bool ignore_merges = false;       // a pre-token that is itself a vocabulary entry is used whole
  bool prepend_first_only = false;  // SentencePiece: "▁" only before the text's first segment
  // SentencePiece as HF's Prepend("▁") normalizer: "▁" before every segment, also one that
  // starts with a space (Metaspace adds it only where no "▁" leads already).
  bool prepend_always = false;
  // Raw-UTF-8 BPE with "▁" for spaces, split only at newlines (GGUF "gemma4"): a run of
  // newlines that is itself a token is used whole.
  bool newline_runs_whole = false;
  std::optional<int32_t> bos_id, eos_id, unk_id, pad_id;
  bool add_bos = false;
  bool add_eos = false;
  std::string chat_template;
};

// llama.cpp's pre-tokenizer names and the regexes they stand for.
struct PreTokenizerName {
  const char* name;
  std::vector<std::string> regexes;  // applied in order, each to the pieces of the one before
  bool ignore_merges = false;        // llama.cpp sets it for this name
  bool from_json = false;            // pre_name_for_regex may answer it (HF's exact Split regex)
};
const std::vector<PreTokenizerName>& known_pre_tokenizers();
// The entry for a llama.cpp name, or Error(kUnsupported) naming it.
const PreTokenizerName& pre_tokenizer_for_name(const std::string& name);
// The regex for a single-regex llama.cpp name, or Error(kUnsupported) naming it.
std::string pre_regex_for_name(const std::string& name);
// The llama.cpp name for a regex, or Error(kUnsupported) quoting it.
std::string pre_name_for_regex(const std::string& regex);

}  // namespace afm::tokenizer
