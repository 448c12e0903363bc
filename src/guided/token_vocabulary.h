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
// Loop indexes (loop_index()): for a small automaton (LoopSpec: up to 16 states; per state and
// byte, the next loop state or "out"), the tokens whose bytes all stay inside it from state 0
// as a ready bitmask, and per loop state the remainders of the tokens that go out from it after
// at least one byte (from the out byte on) as a second trie. Tokens whose first byte is already
// out are not indexed (callers walk the main trie for those first bytes). Whether an out byte
// is rejected or leads elsewhere is not part of the spec, so one spec serves string content in
// any context. The mask layer builds a spec from a closed group of
// grammar states (JSON string content with the middle states of multi-byte UTF-8 characters,
// digit runs), so those tokens cost a bitmask OR instead of a trie walk.
// Counted loops (a bounded repetition: `maxLength` string content, the atoms of `format:
// email`): a transition may carry kCount, "one more copy used". The index then also records,
// per indexed token, the copy (counted transitions taken before it) in which it reads its last
// loop byte, so that a caller who knows how many copies are left can clear the tokens that
// need more (counted_over()), and the largest copy any token reads a byte in (max_copy: a
// caller who knows the loop repeats unchanged that far needs no clearing).
// Built on first use per distinct spec and kept for the vocabulary's lifetime (at most
// kMaxLoopIndexes; past that loop_index() returns null); thread-safe (a mutex guards the
// cache; the indexes themselves are immutable).
// Errors: an out-of-range EOS id or mismatched input sizes throw afm::Error(kInvalidArgument).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "guided/grammar.h"

namespace afm::guided {

class TokenVocabulary {
 public:
  // One trie node: the byte on the edge from its parent, its depth (root children: 1),
  // the end of its subtree in preorder, and the ids of tokens whose bytes end here.
  // Ids are stored in preorder too: the node's own are token_ids()[first_token, + num_tokens),
  // its subtree's are token_ids()[first_token, subtree_first_token(subtree_end)).
  struct Node {
    uint8_t byte = 0;
    uint32_t depth = 0;
    uint32_t subtree_end = 0;
    uint32_t first_token = 0;  // into token_ids(); set for nodes without tokens too
    uint32_t num_tokens = 0;
  };

  static constexpr size_t kMaxLoopStates = 16;
  static constexpr size_t kMaxLoopIndexes = 64;
  // See the file comment. next[q][b]: a loop state (< num_states), possibly with kCount set
  // (the transition starts the next copy of a counted loop), or kOut.
  struct LoopSpec {
    static constexpr uint8_t kOut = 0xff;
    static constexpr uint8_t kCount = 0x80;
    uint32_t num_states = 0;
    std::array<std::array<uint8_t, 256>, kMaxLoopStates> next{};
    bool operator==(const LoopSpec&) const = default;
    size_t hash() const;
    // The loop state of transition value `v` (not kOut), and whether it starts a new copy.
    static uint8_t target(uint8_t v) { return v & static_cast<uint8_t>(~kCount); }
    static bool counts(uint8_t v) { return v != kOut && (v & kCount) != 0; }
    bool counted() const;  // any transition with kCount
  };
  struct LoopIndex {
    LoopSpec spec;
    size_t hash = 0;
    std::vector<uint32_t> all_in_mask;  // tokens that never leave the loop (mask_words() words)
    // Per loop state q: the preorder trie of the remainders (out byte first) of the tokens
    // that go out from q after one or more bytes, and the token ids it references.
    std::array<std::vector<Node>, kMaxLoopStates> rest_nodes;
    std::array<std::vector<int32_t>, kMaxLoopStates> rest_ids;
    // Counted specs only (see the file comment). The copy of a byte is the number of kCount
    // transitions taken before it. last_copy: (copy of the token's last loop byte, id) for
    // every indexed token with a copy > 0, largest first; max_copy: the largest copy of any
    // byte an indexed token reads from the loop, its out byte included.
    std::vector<std::pair<uint32_t, int32_t>> last_copy;
    uint32_t max_copy = 0;
    // Per k < kOverMasks: the indexed tokens whose last loop byte is in copy k or later.
    std::vector<std::vector<uint32_t>> over_masks;
    // Clears in `words` the tokens whose last loop byte is in copy `copies` or later (those
    // that need more than `copies` copies of a loop that ends there).
    void clear_counted_over(uint32_t copies, std::span<uint32_t> words) const;
  };
  static constexpr uint32_t kOverMasks = 16;

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
  // Where the ids of the subtree starting at node i begin (i == nodes().size(): the end).
  uint32_t subtree_first_token(size_t i) const {
    return i < nodes_.size() ? nodes_[i].first_token : static_cast<uint32_t>(token_ids_.size());
  }
  // The tokens starting with byte b: token_ids()[first, second) (subtrees are contiguous).
  std::pair<uint32_t, uint32_t> root_token_range(uint8_t b) const { return root_ranges_[b]; }

  // Grammar tokens with a byte ',', '[' or ']' (they can end or open a JSON array's element),
  // and the subset where such a byte comes after a '"' (what can do so from inside a string),
  // in increasing id order: the tokens unique_items.h always examines.
  std::span<const int32_t> tokens_with_array_syntax() const { return array_syntax_; }
  std::span<const int32_t> tokens_with_quote_then_array_syntax() const {
    return quote_then_array_syntax_;
  }
  // The loop index of `spec` (see the file comment); built on first use, then shared. Null
  // when kMaxLoopIndexes other specs are cached already.
  std::shared_ptr<const LoopIndex> loop_index(const LoopSpec& spec) const;
  // Loop indexes built so far (for tests), and the heap bytes they hold (for metrics).
  size_t num_loop_indexes() const;
  size_t loop_index_bytes() const;

 private:
  struct LoopCache {
    std::mutex mutex;
    std::vector<std::shared_ptr<const LoopIndex>> indexes;
  };
  void build_trie();
  // Appends the preorder trie of `entries` (sorted by bytes, equal strings adjacent).
  static void build_trie(std::span<const std::pair<std::string_view, int32_t>> entries,
                         std::vector<Node>* nodes, std::vector<int32_t>* ids);
  std::shared_ptr<const LoopIndex> make_loop_index(const LoopSpec& spec, size_t hash) const;

  std::vector<std::string> bytes_;
  std::vector<bool> special_;
  std::optional<int32_t> eos_id_;
  std::vector<Node> nodes_;
  std::vector<int32_t> token_ids_;
  std::array<std::pair<uint32_t, uint32_t>, 256> root_ranges_{};
  std::vector<int32_t> array_syntax_, quote_then_array_syntax_;
  std::unique_ptr<LoopCache> loop_cache_ = std::make_unique<LoopCache>();
};

}  // namespace afm::guided
