// Text <-> token ids for byte-level BPE (GPT-2, Llama-3, Qwen2/3, DeepSeek, Falcon, StarCoder,
// ...), SentencePiece-style BPE (byte fallback) and SentencePiece by scores (GGUF "llama"),
// loaded from a Hugging Face tokenizer.json or from GGUF tokenizer.* keys. Encodings are
// identical to Hugging Face `tokenizers` (tests/tokenizer/parity_test.py) and to llama.cpp's
// own vocabulary tests (tests/tokenizer/llama_vocab_test.cpp).
//
// Contract: loaders throw afm::Error naming the problem (JSON pointer or GGUF key) and never
// accept a configuration they would tokenize differently from its source. A Tokenizer is
// immutable after loading; encode/decode are safe to call from many threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/reader.h"
#include "tokenizer/vocab_spec.h"

namespace afm::tokenizer {

class BpeModel;
class PreTokenizer;
class SpmModel;

struct EncodeOptions {
  // Special added-token strings in the text map to their ids (else they are tokenized as
  // text). Non-special added tokens (llama.cpp's user-defined) always do, as in HF and llama.cpp.
  bool parse_special = true;
  bool add_bos = false;  // prepend BOS (callers pass tokenizer.add_bos() for models)
};

class Tokenizer {
 public:
  static Tokenizer from_json(const std::string& tokenizer_json,
                             const std::string& tokenizer_config_json = "");
  static Tokenizer from_json_file(
      const std::string& path);  // reads tokenizer_config.json beside it
  // tokenizer.ggml.model "gpt2" (pre names: known_pre_tokenizers()), "llama" (SentencePiece
  // by scores) or "gemma4"; anything else is Error(kUnsupported) naming it.
  static Tokenizer from_gguf(const gguf::File& file);
  explicit Tokenizer(VocabSpec spec);
  ~Tokenizer();
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;

  std::vector<int32_t> encode(std::string_view text, EncodeOptions options = {}) const;
  // SentencePiece kinds drop the "▁" prefix the encoder adds: HF-style (tokenizer.json) from the
  // start of the text, llama.cpp-style (GGUF "llama") from the first token only.
  std::string decode(std::span<const int32_t> ids, bool skip_special = false) const;
  // The bytes one token stands for (added tokens: their content).
  std::string token_bytes(int32_t id) const;

  const VocabSpec& spec() const { return spec_; }
  int32_t vocab_size() const { return static_cast<int32_t>(spec_.tokens.size()); }
  bool is_special(int32_t id) const;
  // The id of the added token whose content is exactly `content` (e.g. "<|im_end|>").
  std::optional<int32_t> added_token_id(std::string_view content) const;
  std::optional<int32_t> bos_id() const { return spec_.bos_id; }
  std::optional<int32_t> eos_id() const { return spec_.eos_id; }
  bool add_bos() const { return spec_.add_bos; }
  const std::string& chat_template() const { return spec_.chat_template; }

 private:
  void encode_segment(std::string_view text, bool at_start, std::vector<int32_t>& out) const;
  // HF's Prepend("▁") + Replace(" ", "▁") normalizer: the segment normalized, split at the
  // normalized added tokens, each piece BPE-encoded.
  void encode_normalized_segment(std::string_view text, std::vector<int32_t>& out) const;

  VocabSpec spec_;
  std::unique_ptr<BpeModel> bpe_;                   // the BPE kinds
  std::unique_ptr<SpmModel> spm_;                   // kSentencePiece
  std::unique_ptr<PreTokenizer> pre_;               // when the vocabulary has a pre-tokenizer regex
  std::vector<uint8_t> special_;                    // by id: 1 for added special tokens
  std::vector<const AddedToken*> added_by_length_;  // longest first, for splitting
  // With prepend_always: the normalized added tokens' normalized content and id, longest
  // first (they are matched after normalization, not in the raw text).
  std::vector<std::pair<std::string, int32_t>> normalized_added_;
  // Quick reject before comparing strings: [0] any added token, [1] non-special ones.
  bool added_first_byte_[2][256] = {};
};

// Streams text out of a token sequence without ever emitting part of a UTF-8 character:
// bytes of an incomplete trailing character are held back until the next token completes
// them (or flush() gives them up as U+FFFD).
class IncrementalDecoder {
 public:
  explicit IncrementalDecoder(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}
  // Returns the text that became complete with this token (possibly empty).
  std::string push(int32_t id);
  std::string flush();

 private:
  const Tokenizer& tokenizer_;
  std::string pending_;
};

}  // namespace afm::tokenizer
