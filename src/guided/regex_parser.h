// Internal: ECMA-262 regex syntax tree used by regex_compiler.cpp. See regex_compiler.h for
// the supported subset and the error contract.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "guided/char_classes.h"

namespace afm::guided::regex {

struct Node {
  enum class Kind { kChars, kConcat, kAlt, kRepeat, kStart, kEnd };
  Kind kind = Kind::kConcat;
  CodePointSet chars;        // kChars
  std::vector<Node> kids;    // kConcat, kAlt, kRepeat (one kid)
  uint32_t min = 0, max = 0; // kRepeat
  size_t offset = 0;         // byte offset in the pattern, for errors

  explicit Node(Kind k = Kind::kConcat, size_t at = 0) : kind(k), offset(at) {}
};

// Parses the whole pattern; the root is always a kAlt of branches (each a kConcat).
Node parse(std::string_view pattern);

// Which ends of a top-level branch are anchored. strip_anchors removes the branch's leading ^
// and trailing $; with search = false (a full match) both ends count as anchored anyway.
struct BranchEnds {
  bool anchored_start, anchored_end;
};
BranchEnds strip_anchors(Node& branch, bool search);
// The error for a ^ or $ anywhere else (`anchor` is that node).
[[noreturn]] void misplaced_anchor(std::string_view pattern, const Node& anchor);

// Error helpers naming the pattern and the offset.
[[noreturn]] void unsupported(std::string_view pattern, size_t offset, const std::string& what);
[[noreturn]] void syntax_error(std::string_view pattern, size_t offset, const std::string& what);

}  // namespace afm::guided::regex
