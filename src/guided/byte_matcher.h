// Incremental recogniser over bytes for a compiled Grammar: an Earley parser.
//
// Why Earley: schema grammars are recursive ($ref), ambiguous (anyOf branches sharing a
// prefix) and full of counted repetition (maxLength, maxItems). Earley handles all three
// without grammar rewriting. Repetition productions keep their count in the item's dot
// (saturated at `min` when unbounded), so `x{0,1000}` costs one item per position, not 1000.
// Empty derivations use the Aycock-Horspool rule (advance over nullable nonterminals when
// predicting them), so completions never need to revisit the set being built.
// Right recursion uses Leo's rule: where a finished set holds only "tail" items waiting for a
// nonterminal (items one symbol from their end, all completing one node), completing it is
// completing the top of that chain, which each set records once (chain tops). A right-linear
// grammar (the regular layer's automata) then costs O(1) items per byte instead of a completion
// per byte already read.
//
// State: one Earley set per consumed byte, stored back to back in one vector. rollback(n)
// truncates; copying a matcher copies two flat vectors. Because Grammar::build() removes
// unproductive productions, every state the matcher can reach extends to a complete match:
// allowed_next_bytes() is empty only when is_complete() is true (or the language is empty).
//
// For the token-mask layer (mask_cache.h) the matcher also exposes state_key(): a serialisation
// of the part of the chart that decides which byte strings are accepted from here on, so two
// positions with equal keys accept exactly the same continuations; and byte_classes(): the
// allowed bytes grouped so that all bytes of a group lead to equal successor states.
//
// Thread safety: a ByteMatcher is single-threaded; many matchers may share one Grammar.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <string_view>
#include <vector>

#include "guided/grammar.h"

namespace afm::guided {

class ByteMatcher {
 public:
  explicit ByteMatcher(std::shared_ptr<const Grammar> grammar);

  // Consumes one byte if the grammar allows it; on false the state is unchanged.
  bool accept_byte(uint8_t byte);
  // Consumes all bytes or none (rolls back a partial match); returns whether it consumed.
  bool accept_bytes(std::string_view bytes);
  // Forgets the last n consumed bytes (n <= consumed()).
  void rollback(size_t n);
  // True when the bytes consumed so far form a complete sentence of the grammar.
  bool is_complete() const;
  // The bytes accept_byte() would take now.
  ByteSet allowed_next_bytes() const;
  size_t consumed() const { return set_begin_.size() - 1; }
  // True when the last byte consumed was the '[' of an array the grammar marks unique
  // (Grammar::unique_array()) in at least one parse: the current set holds one of its
  // productions right after its first symbol, predicted at the previous position.
  bool opened_unique_array() const;
  // Items in the current Earley set (for tests and diagnostics: the cost of the next step).
  size_t current_set_size() const { return items_.size() - set_begin_.back(); }

  // Writes into *key a serialisation of the current set's items that scan a terminal next and,
  // following origin links, every item a future completion could advance: a graph whose nodes
  // are "the items of set j waiting for nonterminal X", numbered in discovery order. Items are
  // named by their future, not their production: the terminal they scan (current set only),
  // the symbols left after it (a canonical suffix id) or, for repetitions, the counts left and
  // the repeated symbol.
  // An item one symbol from its end ("tail") only passes a completion on, so a node whose
  // items are all tails passing it to one node is replaced by that node: the UTF-8 middle
  // states of different characters and nesting depths become one state. Nodes are identified
  // by their content (sorted entries, duplicates dropped, children by signature), so nodes of
  // different sets with one future are one node and a repetition entered at many positions
  // keeps a bounded key. Equal keys => the same byte strings are accepted from here on
  // (is_complete() is not part of the key). Cost: linear in the visited items.
  void state_key(std::vector<uint32_t>* key) const;
  // allowed_next_bytes() partitioned into groups whose bytes are scanned by the same items, so
  // every byte of a group yields an equal successor state (equal state_key()).
  std::vector<ByteSet> byte_classes() const;
  const Grammar& grammar() const { return *grammar_; }

  // Convenience: does the whole text match from the start state? Unique arrays included
  // (UniqueItemsGuard::matches).
  static bool matches(std::shared_ptr<const Grammar> grammar, std::string_view text);

 private:
  struct Item {
    uint32_t prod;
    uint32_t dot;     // sequence: symbols matched; repetition: copies matched (saturated)
    uint32_t origin;  // index of the set where this item was predicted
    bool operator==(const Item&) const = default;
  };
  // Every field reaches the low bits the set builder's table indexes by (a full 64-bit mix):
  // a plain xor of dot << 32 and origin made items of one repetition at different counts and
  // origins collide by the thousand (`(.*a){20}` over 200 bytes took 44 s, all in probing).
  struct ItemHash {
    size_t operator()(const Item& i) const {
      uint64_t h = (uint64_t{i.prod} * 0x9E3779B97F4A7C15ull) ^ (uint64_t{i.dot} << 32 | i.origin);
      h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
      h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
      return static_cast<size_t>(h ^ (h >> 31));
    }
  };
  class SetBuilder;
  using KeyNode = std::pair<uint32_t, uint32_t>;  // (set, nonterminal)
  struct KeyEntry {  // one item in state_key(): what it will do, and the node it completes
    std::array<uint32_t, 4> words{};  // unused words stay 0; the first word fixes the size
    uint32_t size = 0;
    KeyNode node;        // the node its completion advances
    uint32_t child = 0;  // that node's signature
    bool operator<(const KeyEntry& o) const {
      return words != o.words ? words < o.words : child < o.child;
    }
  };
  struct KeyScratch {  // state_key()'s working memory, kept between calls
    std::vector<std::pair<KeyNode, uint32_t>> visited;  // node -> signature (or in progress)
    std::vector<KeyEntry> entries;                      // signature()'s stack of entries
    std::vector<KeyEntry> top;                          // the current set's entries
    std::vector<uint32_t> flat;                         // the contents, back to back
    std::vector<std::pair<size_t, size_t>> contents;    // by signature: a range of flat
    bool cyclic = false;    // a node referred to itself (through others) by its visit number
    bool too_deep = false;  // nodes past kMaxSignatureDepth went undescribed
    int depth = 0;
  };
  static void append_entries(std::vector<KeyEntry>& entries, size_t first,
                             std::vector<uint32_t>* out);
  uint32_t signature(KeyNode raw) const;
  bool is_tail(const Item& item) const;
  KeyNode resolve(KeyNode node) const;
  KeyEntry describe(const Item& item, bool top) const;

  // The symbol the item waits for; false when it cannot advance.
  bool next_symbol(const Item& item, Symbol* out) const;
  void index_waiting_items();  // indexes the last (finished) set, its chain tops included
  // The completed item that completing `nt` at finished set `set` amounts to (Leo's rule), or
  // null when its waiting items are not tails of one chain.
  const Item* chain_top(uint32_t set, uint32_t nt) const;
  Item find_chain_top(size_t first, size_t last, int budget) const;
  std::span<const std::pair<uint32_t, uint32_t>> waiting_for(uint32_t set, uint32_t nt) const;
  bool complete(const Item& item) const;
  Item advanced(const Item& item) const;

  std::shared_ptr<const Grammar> grammar_;
  std::vector<Item> items_;
  // Open-addressing index of the set under construction (slot = item index + 1, 0 = free);
  // kept between calls so building a set allocates nothing in the steady state.
  std::vector<uint32_t> dedupe_;
  std::vector<uint32_t> dedupe_used_;  // the slots of dedupe_ the last set filled
  std::vector<uint32_t> set_begin_;  // set k is items_[set_begin_[k] .. set_begin_[k+1])
  // (nonterminal, item index) for every item waiting for a nonterminal, per finished set,
  // sorted by nonterminal: set k's are waiting_[waiting_begin_[k] .. waiting_begin_[k+1]).
  std::vector<std::pair<uint32_t, uint32_t>> waiting_;
  std::vector<uint32_t> waiting_begin_;
  // Parallel to waiting_: per entry, chain_top() of its (set, nonterminal) (kNoChain: none).
  std::vector<Item> chain_tops_;
  mutable KeyScratch key_scratch_;
};

}  // namespace afm::guided
