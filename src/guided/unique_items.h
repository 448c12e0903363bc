// uniqueItems beside the grammar: the elements of an array the grammar marks unique
// (GrammarBuilder::mark_unique_array) must be pairwise distinct, which no context-free grammar
// can say. UniqueItemsGuard watches the bytes a ByteMatcher consumes and refuses the ones that
// would break it.
//
// Texts stand for values. The schema compiler marks an array unique only when every value its
// items can take has exactly one text under the grammar (schema_unique_items.cpp: fixed
// whitespace, declared key order, canonical strings and integers, numbers compiled to one text
// each inside unique items), so two elements are equal JSON values exactly when their texts
// are equal, and the guard compares texts.
//
// Cost: a mask in a unique array costs the cached grammar mask plus a check of the tokens that
// can end an element or open an array, and of those that keep an element on an earlier one's
// text; rollback replays the observed text (linear in it).
//
// What is refused, for every open unique array (they may nest: a unique array of objects with
// unique arrays inside):
//  - a byte that ends an element (',' or ']' at the array's level) whose text equals an
//    earlier element's;
//  - a byte string after which every completion of the current element is such a duplicate
//    (the grammar's "no dead ends" promise, kept under the extra rule). Only possible while the
//    element's text is a prefix of an earlier one; then a walk over the grammar's next bytes
//    along the earlier texts (bounded by their total length) finds a byte that leaves them all,
//    or an end that is not a duplicate, or proves there is none. The walk is for the outermost
//    such array; where it leaves that array's earlier texts, the arrays inside are checked the
//    same way from there.
// Arrays are recognised when their '[' is consumed: ByteMatcher::opened_unique_array().
//
// Thread safety: one guard per sequence, single-threaded, like its matcher.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "guided/byte_matcher.h"
#include "guided/grammar.h"
#include "guided/token_vocabulary.h"

namespace afm::guided {

// The JSON structure of a canonical text read byte by byte, and the open unique arrays'
// elements. Internal to unique_items.cpp and its tests.
struct UniqueScan {
  // One open unique array: the level (containers.size() inside it), its current element's text
  // so far, and its finished elements: `seen` (owned by the guard, set for each use since
  // guards are copied) and `added` (finished during this scan).
  struct Array {
    size_t level = 0;
    std::string element;
    const std::set<std::string>* seen = nullptr;
    std::vector<std::string> added;
    bool is_duplicate(const std::string& text) const;
    bool known_prefix(std::string_view prefix) const;  // some finished element starts with it
  };
  std::vector<uint8_t> containers;  // '[' or '{' per open container, outermost first
  bool in_string = false;
  bool escaped = false;
  std::vector<Array> arrays;  // the open unique arrays, outermost first

  bool open() const { return !arrays.empty(); }
  // True when `b` would open an array here (the caller then asks the matcher if it is unique).
  bool opens_array(uint8_t b) const { return !in_string && b == '['; }
  // At the innermost unique array's own level, outside any element's string.
  bool at_array_level() const {
    return open() && containers.size() == arrays.back().level && !in_string;
  }
  // Advances over `b` (`unique`: it opens a unique array). False when `b` finishes an element
  // equal to an earlier one; the scan is then unusable.
  bool feed(uint8_t b, bool unique);
  // The outermost open array whose element is a prefix of one it finished, or arrays.size().
  size_t first_on_known_prefix() const;
};

class UniqueItemsGuard {
 public:
  // Whether `bytes` (which the grammar accepts from m's state, and this guard has seen every
  // byte m consumed) keep a completion with distinct elements. m is stepped and restored.
  bool allows(ByteMatcher& m, std::string_view bytes) const;
  // Records bytes m has just consumed (in order, one call per byte, after m accepted it).
  // False when the byte finished a duplicate element (only possible without allows()).
  bool observe(const ByteMatcher& m, uint8_t byte);
  // Forgets the last n observed bytes.
  void rollback(size_t n);
  // Clears the bits of tokens that allows() refuses, among those set in `words` (the
  // grammar's mask for m's state). Only tokens that can end an element or open an array, or
  // that keep the element on an earlier element's text, are examined.
  void filter_mask(ByteMatcher& m, const TokenVocabulary& vocabulary,
                   std::span<uint32_t> words) const;

  // Does `text` match `grammar` with every unique array's elements distinct?
  static bool matches(std::shared_ptr<const Grammar> grammar, std::string_view text);

 private:
  UniqueScan fresh_scan() const;
  void replay();
  void keep_finished();  // moves the scan's finished elements into seen_

  UniqueScan scan_;
  std::vector<std::set<std::string>> seen_;  // per open unique array (scan_.arrays)
  std::string text_;                 // every observed byte (rollback replays it)
  std::vector<size_t> unique_opens_;  // positions in text_ of '[' that opened unique arrays
};

}  // namespace afm::guided
