// ECMA-262 regular expressions (the subset JSON Schema `pattern` uses) -> grammar expressions.
//
// Supported: literals, escapes (\n \r \t \v \f \0 \xHH \uHHHH \u{H..} \cX, identity escapes),
// classes [...] and [^...] with ranges, \d \w \s and their negations (inside classes too), '.',
// groups (capturing, (?:...) and (?<name>...)), alternation, quantifiers ? * + {m} {m,} {m,n}
// (lazy forms too: same language), and anchors ^ $ at the start/end of a top-level branch.
// Matching is over Unicode code points ('u'-flag semantics); '.' excludes \n \r U+2028 U+2029.
// Unicode property escapes \p{..} \P{..} (unicode_properties.h). Unsupported constructs
// (backreferences, lookaround, \b \B, scripts in \p{..}, anchors elsewhere) throw
// afm::Error(kUnsupported) naming the construct and its byte offset in the pattern; syntax
// errors throw afm::Error(kInvalidArgument) with the offset. Patterns are untrusted: nesting
// depth and repetition counts are bounded.
//
// Search semantics (JSON Schema): a pattern matches a string when it matches anywhere in it,
// so unanchored branch ends are padded with "any characters".
// Thread safety: stateless functions; the builder is the caller's.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "guided/char_classes.h"
#include "guided/grammar.h"

namespace afm::guided {

struct RegexExpr {
  Expr expr;
  uint32_t min_chars = 0;           // shortest match, in code points
  uint32_t max_chars = kUnbounded;  // longest match, in code points (kUnbounded if none)
};

// `search`: true for JSON Schema semantics (match anywhere), false for a full match.
RegexExpr compile_regex(GrammarBuilder& b, std::string_view pattern, CharEncoding encoding,
                        bool search);

// A whole grammar for the pattern over raw UTF-8 text.
std::shared_ptr<const Grammar> compile_regex_grammar(std::string_view pattern, bool search);

}  // namespace afm::guided
