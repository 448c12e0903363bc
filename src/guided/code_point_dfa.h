// The regular layer: deterministic automata over Unicode code points, for what a grammar
// alone cannot say. JSON Schema needs the complement of a language (object keys that match
// none of the `patternProperties` patterns), intersections (a `pattern` with `minLength` /
// `maxLength`, a `format` with a `pattern`, `propertyNames` with the keys an object may write)
// and emptiness (is a region of keys possible at all). Automata are built from the regex
// syntax tree (regex_parser.h), from finite sets of strings and from length bounds, combined,
// minimised, and lowered back to grammar rules.
//
// Representation: the code points 0..0x10FFFF are cut into "atoms", intervals that no set used
// to build the automaton splits; transitions are a table (state, atom) -> state, kDead where
// the automaton rejects. State 0 is the start. Surrogates (U+D800..U+DFFF) are always an atom
// of their own that no transition takes: they are not characters (char_classes.h).
//
// Lowering is right-linear, one rule per state: R_q -> (class(q->p) R_p)* | "" if q accepts.
// The Earley matcher's chain tops (Leo's rule, byte_matcher.h) make that cost O(1) items per
// byte, and a state reached at any position gives the same state key, so the mask layer sees
// a DFA state as one state.
//
// Untrusted input: every construction is bounded by `max_states`; past it Error(kUnsupported)
// names the budget. Thread safety: values; no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "guided/char_classes.h"
#include "guided/grammar.h"

namespace afm::guided {

namespace regex {
struct Node;
}

class CodePointDfa {
 public:
  static constexpr uint32_t kDead = UINT32_MAX;
  static constexpr size_t kDefaultMaxStates = 20000;

  // The strings an ECMA-262 pattern matches: anywhere in the string (`search`, JSON Schema's
  // `pattern`) or as a whole. The regex_compiler.h subset; other constructs throw as there.
  static CodePointDfa from_regex(std::string_view pattern, bool search,
                                 size_t max_states = kDefaultMaxStates);
  // Exactly the given strings (UTF-8, as JSON Schema names are).
  static CodePointDfa from_strings(const std::vector<std::string>& strings);
  // Any string of min..max code points (max may be kUnbounded).
  static CodePointDfa length_between(uint32_t min, uint32_t max,
                                     size_t max_states = kDefaultMaxStates);
  static CodePointDfa everything() { return length_between(0, kUnbounded); }
  static CodePointDfa nothing();

  CodePointDfa complement() const;
  static CodePointDfa intersect(const CodePointDfa& a, const CodePointDfa& b,
                                size_t max_states = kDefaultMaxStates);
  static CodePointDfa unite(const CodePointDfa& a, const CodePointDfa& b,
                            size_t max_states = kDefaultMaxStates);
  // Same language, fewest states (unreachable and dead states removed, equivalent states
  // merged; atoms that behave alike merged).
  CodePointDfa minimized() const;

  bool empty() const;  // no string at all
  bool matches(std::string_view utf8) const;
  size_t num_states() const { return accepting_.size(); }
  size_t num_atoms() const { return atom_start_.size(); }
  // The shortest and longest accepted lengths in code points (kUnbounded: no longest).
  // Precondition: !empty().
  std::pair<uint32_t, uint32_t> length_range() const;

  // The language as grammar rules over the code points' bytes in `encoding`.
  Expr lower(GrammarBuilder& b, CharEncoding encoding) const;

 private:
  static CodePointDfa from_regex_tree(regex::Node root, std::string_view pattern, bool search,
                                      size_t max_states);
  static CodePointDfa with_lookaheads(regex::Node root, std::string_view pattern, bool search,
                                      size_t max_states);
  uint32_t atom_of(uint32_t cp) const;
  uint32_t next(uint32_t state, uint32_t atom) const { return next_[state * num_atoms() + atom]; }
  CodePointSet atom_set(uint32_t atom) const;
  // Product of two automata over their common refinement of atoms: both accept (`both`,
  // intersection) or either does (union).
  static CodePointDfa product(const CodePointDfa& a, const CodePointDfa& b, bool both,
                              size_t max_states);
  CodePointDfa trimmed() const;  // reachable states that can still accept
  bool is_everything() const;    // recognises the one-state form of every string

  std::vector<uint32_t> atom_start_;  // atom i = [atom_start_[i], atom_start_[i + 1] - 1]
  std::vector<uint32_t> next_;        // num_states() x num_atoms()
  std::vector<bool> accepting_;
  // Set by minimized(): minimising or trimming again returns a copy (schema code minimises
  // after each operation, and lowering minimises once more).
  bool minimal_ = false;
  friend class DfaBuilder;
};

}  // namespace afm::guided
