// The byte strings of a tokenizer's vocabulary, arranged as a trie for token-mask computation.
//
// Built once per tokenizer and immutable afterwards: share it across threads and sequences as
// std::shared_ptr<const TokenVocabulary>. The trie is stored flat in preorder (depth-first,
// children in byte order), so a subtree is the contiguous node range [i, subtree_end(i)) and a
// mask walk can skip a rejected subtree in one step.
//
// Token kinds:
//  - ordinary tokens: their bytes (possibly a partial UTF-8 character, for byte-level BPE);
//  - special/control tokens and tokens with no bytes: never allowed by a grammar;
//  - the EOS token (optional): allowed exactly when the grammar is complete.
// This library does not depend on the tokenizer: callers pass the bytes and flags per id
// (tools/afm/cmd_schema.cpp shows how to get them from a tokenizer::Tokenizer).
// Errors: an out-of-range EOS id or mismatched input sizes throw afm::Error(kInvalidArgument).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace afm::guided {

class TokenVocabulary {
 public:
  // One trie node: the byte on the edge from its parent, its depth (root children: 1),
  // the end of its subtree in preorder, and the ids of tokens whose bytes end here.
  struct Node {
    uint8_t byte = 0;
    uint32_t depth = 0;
    uint32_t subtree_end = 0;
    uint32_t first_token = 0;  // into token_ids()
    uint32_t num_tokens = 0;
  };

  // token_bytes[id] are the bytes of token id; special[id] marks special/control tokens.
  TokenVocabulary(std::vector<std::string> token_bytes, std::vector<bool> special,
                  std::optional<int32_t> eos_id);

  int32_t size() const { return static_cast<int32_t>(bytes_.size()); }
  const std::string& token_bytes(int32_t id) const { return bytes_[static_cast<size_t>(id)]; }
  bool is_special(int32_t id) const { return special_[static_cast<size_t>(id)]; }
  std::optional<int32_t> eos_id() const { return eos_id_; }
  // True for tokens a grammar can allow by their bytes (not special, not empty).
  bool is_grammar_token(int32_t id) const {
    return !special_[static_cast<size_t>(id)] && !bytes_[static_cast<size_t>(id)].empty();
  }
  // Words of a token bitmask: bit (id % 32) of word (id / 32).
  size_t mask_words() const { return (bytes_.size() + 31) / 32; }

  std::span<const Node> nodes() const { return nodes_; }
  std::span<const int32_t> token_ids() const { return token_ids_; }

 private:
  void build_trie();

  std::vector<std::string> bytes_;
  std::vector<bool> special_;
  std::optional<int32_t> eos_id_;
  std::vector<Node> nodes_;
  std::vector<int32_t> token_ids_;
};

}  // namespace afm::guided
