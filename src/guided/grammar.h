// Grammar IR for guided generation: every input (JSON Schema, regex, later EBNF) lowers to it.
//
// Two layers:
//  - GrammarBuilder: a mutable arena of expressions (byte sets, literals, sequences,
//    alternatives, bounded/unbounded repetition, references to named rules). Rules may refer
//    to each other in any order, recursion included. Compilers build with it, then call build().
//  - Grammar: the immutable, flattened result the matchers run on. Each nonterminal has a list
//    of productions; a production is either a sequence of symbols or a counted repetition of
//    one symbol (min..max times, max may be kUnbounded). Terminals are 256-bit byte sets.
//    build() removes productions that can derive no finite string, so every prefix a matcher
//    accepts can still be completed (no dead ends for the token-mask layer).
//
// Thread safety: a Grammar is immutable after build() and may be shared by any number of
// threads (hold it through std::shared_ptr<const Grammar>). GrammarBuilder is single-threaded.
// Errors: building a grammar larger than the builder's limit throws afm::Error(kUnsupported).
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace afm::guided {

// A set of byte values, 256 bits.
class ByteSet {
 public:
  void set(uint8_t b) { bits_[b >> 6] |= uint64_t{1} << (b & 63); }
  void set_range(uint8_t lo, uint8_t hi) {
    for (unsigned b = lo; b <= hi; ++b) set(static_cast<uint8_t>(b));
  }
  bool test(uint8_t b) const { return (bits_[b >> 6] >> (b & 63)) & 1; }
  bool empty() const { return (bits_[0] | bits_[1] | bits_[2] | bits_[3]) == 0; }
  int count() const;
  ByteSet& operator|=(const ByteSet& o) {
    for (int i = 0; i < 4; ++i) bits_[i] |= o.bits_[i];
    return *this;
  }
  ByteSet operator&(const ByteSet& o) const {
    ByteSet r;
    for (int i = 0; i < 4; ++i) r.bits_[i] = bits_[i] & o.bits_[i];
    return r;
  }
  // The bytes of this set not in `o`.
  ByteSet operator-(const ByteSet& o) const {
    ByteSet r;
    for (int i = 0; i < 4; ++i) r.bits_[i] = bits_[i] & ~o.bits_[i];
    return r;
  }
  // Calls f(byte) for every byte in the set, in increasing order.
  template <typename F>
  void for_each(F&& f) const {
    for (int i = 0; i < 4; ++i) {
      for (uint64_t w = bits_[i]; w != 0; w &= w - 1) {
        f(static_cast<uint8_t>(i * 64 + std::countr_zero(w)));
      }
    }
  }
  // The smallest byte in the set, or 256 when it is empty.
  int lowest() const {
    for (int i = 0; i < 4; ++i) {
      if (bits_[i] != 0) return i * 64 + std::countr_zero(bits_[i]);
    }
    return 256;
  }
  bool operator==(const ByteSet& o) const = default;
  const std::array<uint64_t, 4>& words() const { return bits_; }

 private:
  std::array<uint64_t, 4> bits_{};
};

inline constexpr uint32_t kUnbounded = UINT32_MAX;
using RuleId = uint32_t;

// Handle to an expression inside one GrammarBuilder; meaningless in another builder.
struct Expr {
  uint32_t index = 0;
};

// A symbol of the flattened grammar: a nonterminal (>= 0) or a terminal byte set (~id < 0).
using Symbol = int32_t;
inline bool is_terminal(Symbol s) { return s < 0; }
inline uint32_t terminal_index(Symbol s) { return static_cast<uint32_t>(~s); }

struct Production {
  uint32_t lhs = 0;
  bool repeat = false;           // true: rhs has one symbol, matched min..max times
  uint32_t min = 0, max = 0;     // repetition bounds (only when repeat)
  std::vector<Symbol> rhs;       // the sequence (empty = epsilon)
};

class Grammar {
 public:
  uint32_t start() const { return start_; }
  size_t num_nonterminals() const { return nt_productions_.size(); }
  size_t num_productions() const { return productions_.size(); }
  const Production& production(uint32_t p) const { return productions_[p]; }
  std::span<const uint32_t> productions_of(uint32_t nt) const { return nt_productions_[nt]; }
  bool nullable(uint32_t nt) const { return nullable_[nt]; }
  // A canonical id of rhs[dot..] of production p (dot <= rhs.size()): equal ids <=> equal
  // symbol strings, across productions. Lets the matcher name an item by what is left of it.
  uint32_t suffix_id(uint32_t p, uint32_t dot) const { return suffix_ids_[suffix_begin_[p] + dot]; }
  const ByteSet& terminal(uint32_t index) const { return terminals_[index]; }
  const std::string& name(uint32_t nt) const { return names_[nt]; }
  // Nonterminals marked with GrammarBuilder::mark_unique_array(): arrays whose elements must
  // be pairwise distinct (uniqueItems). The grammar cannot say it; unique_items.h checks it.
  bool unique_array(uint32_t nt) const { return !unique_arrays_.empty() && unique_arrays_[nt]; }
  bool has_unique_arrays() const { return !unique_arrays_.empty(); }
  // True when the language is empty (an unsatisfiable schema): every byte is rejected.
  bool empty_language() const { return nt_productions_[start_].empty(); }
  // Heap bytes this grammar holds (productions, symbols, suffix ids, terminals, names): what
  // keeping it in a cache costs.
  size_t memory_bytes() const;
  // Human-readable listing, for tests and debugging.
  std::string to_string() const;

 private:
  friend class GrammarBuilder;
  void number_suffixes();
  uint32_t start_ = 0;
  std::vector<Production> productions_;
  std::vector<std::vector<uint32_t>> nt_productions_;
  std::vector<bool> nullable_;
  std::vector<uint32_t> suffix_begin_;  // per production, into suffix_ids_ (rhs.size() + 1 each)
  std::vector<uint32_t> suffix_ids_;
  std::vector<ByteSet> terminals_;
  std::vector<std::string> names_;
  std::vector<bool> unique_arrays_;  // per nonterminal; empty when none is marked
};

class GrammarBuilder {
 public:
  // max_nodes bounds the arena (untrusted schemas must not exhaust memory).
  explicit GrammarBuilder(size_t max_nodes = 4u << 20) : max_nodes_(max_nodes) {}

  Expr empty();                       // matches ""
  Expr nothing();                     // matches no string at all
  Expr bytes(const ByteSet& set);     // one byte from the set (an empty set = nothing)
  Expr byte_range(uint8_t lo, uint8_t hi);
  Expr literal(std::string_view text);
  Expr seq(std::vector<Expr> items);
  Expr alt(std::vector<Expr> options);
  Expr repeat(Expr item, uint32_t min, uint32_t max);  // max may be kUnbounded
  Expr optional(Expr item) { return repeat(item, 0, 1); }
  Expr star(Expr item) { return repeat(item, 0, kUnbounded); }
  Expr plus(Expr item) { return repeat(item, 1, kUnbounded); }
  Expr ref(RuleId rule);

  RuleId declare(std::string name);   // a rule to define later (recursion, forward use)
  void define(RuleId rule, Expr body);  // exactly once per rule
  bool defined(RuleId rule) const { return rules_[rule].body >= 0; }
  RuleId rule(std::string name, Expr body) {
    RuleId r = declare(std::move(name));
    define(r, body);
    return r;
  }
  size_t size() const { return nodes_.size(); }
  // Marks `rule` as a JSON array whose elements must be pairwise distinct. Its body must be a
  // sequence (or alternatives of sequences) starting with the byte '[' and ending with ']',
  // elements separated by ',' (Grammar::unique_array(); unique_items.h).
  void mark_unique_array(RuleId rule) { unique_rules_.push_back(rule); }

  // Flattens everything reachable from `start`. Every reachable rule must be defined.
  std::shared_ptr<const Grammar> build(RuleId start) const;

 private:
  enum class Kind : uint8_t { kEmpty, kNothing, kBytes, kLiteral, kSeq, kAlt, kRepeat, kRef };
  struct Node {
    Kind kind;
    uint32_t a = 0, b = 0;        // kBytes: set index; kRepeat: min, max; kRef: rule
    uint32_t first = 0, count = 0;  // kSeq/kAlt: children in kids_; kLiteral: text_ range
  };
  struct RuleDef {
    std::string name;
    int64_t body = -1;
  };
  Expr add(Node node);
  class Lowering;

  size_t max_nodes_;
  std::vector<Node> nodes_;
  std::vector<uint32_t> kids_;
  std::string text_;
  std::vector<ByteSet> sets_;
  std::vector<RuleDef> rules_;
  std::vector<RuleId> unique_rules_;
};

}  // namespace afm::guided
