// The BPE merge model: turns one pre-token (already in the vocabulary's character form) into
// token ids by applying merges lowest rank first, leftmost first among equal ranks (the order
// Hugging Face `tokenizers` uses).
//
// Contract: immutable after construction, encode() is thread-safe (the word cache is guarded).
// Characters missing from the vocabulary become byte-fallback tokens <0xNN> when the vocabulary
// has them, else the unknown token, else they are dropped (as HF does without unk).
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/vocab_spec.h"

namespace afm::tokenizer {

class BpeModel {
 public:
  explicit BpeModel(const VocabSpec& spec);

  void encode(std::string_view word, std::vector<int32_t>& out) const;
  std::optional<int32_t> token_id(std::string_view token) const;

 private:
  struct Merge {
    int32_t rank;
    int32_t merged_id;
  };
  void encode_uncached(std::string_view word, std::vector<int32_t>& out) const;
  void initial_symbols(std::string_view word, std::vector<int32_t>& symbols) const;

  std::unordered_map<std::string, int32_t> vocab_;
  std::unordered_map<uint64_t, Merge> merges_;  // key: (left id << 32) | right id
  std::optional<int32_t> unk_id_;
  bool byte_fallback_;
  int32_t byte_tokens_[256];  // <0xNN> ids, -1 when absent

  static constexpr size_t kCacheMaxEntries = 1 << 16;
  static constexpr size_t kCacheMaxWordBytes = 64;
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache_;
};

}  // namespace afm::tokenizer
