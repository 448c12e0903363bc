// SentencePiece's BPE encoder as llama.cpp runs it for GGUF vocabularies with
// tokenizer.ggml.model = "llama" (Llama-2, Mistral, Phi-3, ...): no merge list, the token
// scores decide.
//
// encode() takes one text segment whose spaces are already "▁" (U+2581) and which already
// carries the prefix "▁" where the vocabulary wants one (Tokenizer does both). It starts from
// the segment's UTF-8 characters and repeatedly joins the adjacent pair whose concatenation is a
// vocabulary token with the highest score; among equal scores the leftmost pair wins. When no
// pair joins any more, every piece is its token; a character that is no token becomes its
// UTF-8 bytes as byte tokens <0xNN>, or the unknown token where the vocabulary has no byte
// token for it (the byte is dropped when there is no unknown token either).
//
// Contract: every token text is a candidate, special ones included (as in llama.cpp); when a
// text occurs twice, the later id wins. Immutable after construction; encode() is thread-safe.
// Cost O(n log n) in the segment's characters.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/vocab_spec.h"

namespace afm::tokenizer {

class SpmModel {
 public:
  // Uses spec.tokens, spec.scores (missing scores count as 0) and spec.unk_id.
  explicit SpmModel(const VocabSpec& spec);

  void encode(std::string_view text, std::vector<int32_t>& out) const;
  std::optional<int32_t> token_id(std::string_view token) const;

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, int32_t, Hash, std::equal_to<>> vocab_;
  std::vector<float> scores_;
  std::optional<int32_t> unk_id_;
  int32_t byte_tokens_[256];  // <0xNN> ids, -1 when absent
};

}  // namespace afm::tokenizer
