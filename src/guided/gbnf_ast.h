// Internal: the syntax tree of a GBNF grammar file (gbnf_parser.h has the contract). The
// parser (gbnf_parser.cpp) builds it; gbnf_lower.cpp checks it and lowers it to the IR.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "guided/char_classes.h"

namespace afm::guided::gbnf {

struct Location {
  uint32_t line = 1, column = 1;  // 1-based; the column counts bytes
};

struct Node {
  enum class Kind : uint8_t { kLiteral, kClass, kRef, kSeq, kAlt, kRepeat };
  Kind kind = Kind::kSeq;
  std::string text;           // kLiteral: UTF-8 bytes
  CodePointSet chars;         // kClass
  uint32_t rule = 0;          // kRef: index into Ast::rules
  uint32_t min = 0, max = 0;  // kRepeat (max may be kUnbounded)
  std::vector<Node> kids;     // kSeq, kAlt, kRepeat (one kid)
  Location at;

  explicit Node(Kind k = Kind::kSeq, Location loc = {}) : kind(k), at(loc) {}
};

struct Rule {
  std::string name;
  bool defined = false;
  Location defined_at;  // where `name ::=` is
  Location used_at;     // first reference (for "undefined rule" errors)
  bool used = false;
  Node body;
};

struct Ast {
  std::vector<Rule> rules;  // in order of first mention
};

// Parses the whole text; throws afm::Error (see gbnf_parser.h).
Ast parse(std::string_view text);

[[noreturn]] void error_at(Location at, const std::string& what);  // kInvalidArgument
[[noreturn]] void unsupported_at(Location at, const std::string& what);

}  // namespace afm::guided::gbnf
