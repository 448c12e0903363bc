// Internal: ECMA-262 regex syntax tree used by regex_compiler.cpp. See regex_compiler.h for
// the supported subset and the error contract.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "guided/char_classes.h"

namespace afm::guided::regex {

struct Node {
  // kLook: a lookahead (?=X) or (?!X) (`negative`), or with `behind` a lookbehind (?<=X) or
  // (?<!X); its one kid the kAlt of X.
  enum class Kind { kChars, kConcat, kAlt, kRepeat, kStart, kEnd, kLook };
  Kind kind = Kind::kConcat;
  CodePointSet chars;        // kChars
  std::vector<Node> kids;    // kConcat, kAlt, kRepeat (one kid), kLook (one kid)
  uint32_t min = 0, max = 0; // kRepeat; a kLook from take_lookaheads: min is its position
  bool negative = false;     // kLook
  bool behind = false;       // kLook: a lookbehind
  size_t offset = 0;         // byte offset in the pattern, for errors

  explicit Node(Kind k = Kind::kConcat, size_t at = 0) : kind(k), offset(at) {}
};

// Parses the whole pattern; the root is always a kAlt of branches (each a kConcat). An
// alternative equal to an earlier one of the same alternation is dropped (the same language).
Node parse(std::string_view pattern);

// Which ends of a top-level branch are anchored. strip_anchors removes the branch's leading ^
// and trailing $, also inside a group at the branch's edge where every alternative of the group
// has one (`(^a|^b)c$`) or the edge is anchored anyway (`^(^a|b)`); with search = false (a
// full match) both ends count as anchored anyway.
struct BranchEnds {
  bool anchored_start, anchored_end;
};
BranchEnds strip_anchors(Node& branch, bool search);
// The error for a ^ or $ anywhere else, or a lookahead anywhere but where take_lookaheads
// takes it (`anchor` is that node).
[[noreturn]] void misplaced_anchor(std::string_view pattern, const Node& anchor);

// Whether a lookahead appears anywhere in the tree.
bool has_lookahead(const Node& n);
// Removes and returns the lookaheads among a top-level branch's own parts that every match
// reaches at one position: in a branch anchored at its start (a ^, or search = false), after
// parts of fixed length (`^(?!aws:)…`, `^[a-z](?!.*--)[a-z0-9-]*$`). Each returned node's `min`
// is that position in code points: the lookahead constrains the string from there (the
// strings whose suffix from there a prefix of matches, or, negated, that none does). A
// lookahead anywhere else (an unanchored branch, after a part of varying length, inside a
// group) gets the error of misplaced_anchor. The lookaheads' own contents are not checked here.
// Lookbehinds are taken where they look back from the string's end: right before the `$`
// that closes the branch (or at its end in a full match, search = false); they come back with
// `behind` set. Anywhere else: the error of misplaced_anchor.
std::vector<Node> take_lookaheads(std::string_view pattern, Node& branch, bool search);

// A searched branch that opens with lookaheads whose every alternative starts with ^
// (`(?!^[0-9]+$)[a-z0-9]+`) looks only at position 0: a match starting later sees ^ fail, so a
// negative one holds there and a positive one does not. Rewrites such a branch in place as the
// branch anchored at the start, and returns the matches starting later when there are any (all
// those lookaheads negative): ^ then at least one character then the rest. Returns nullopt and
// leaves the branch alone otherwise.
std::optional<Node> split_start_lookaheads(Node& branch, bool search);

// Error helpers naming the pattern and the offset.
[[noreturn]] void unsupported(std::string_view pattern, size_t offset, const std::string& what);
[[noreturn]] void syntax_error(std::string_view pattern, size_t offset, const std::string& what);

}  // namespace afm::guided::regex
