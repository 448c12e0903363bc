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
#include <optional>
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
// A pattern whose rules would be ambiguous (regex_ambiguity.h) is compiled through its
// automaton when that is small; `trusted_rules` keeps the rules anyway (afm's own fixed
// regexes, the formats, whose rules were measured to mask faster than their automata).
RegexExpr compile_regex(GrammarBuilder& b, std::string_view pattern, CharEncoding encoding,
                        bool search, bool trusted_rules = false);

// A sub-language of the pattern whose strings all have min_chars..max_chars code points, for
// length bounds whose exact intersection is too large an automaton (an ARN pattern with
// `maxLength: 2048`). Every repetition whose count may vary, X{a,b} with b > a (b may be
// unbounded), becomes X{min(a+j, b), min(b, a+k)}, with the largest k and then the smallest j that
// keep each branch's lengths within the bounds; a searched branch's unanchored ends count as
// repetitions of any character. Narrower than the exact intersection (a string whose one
// repetition runs past a+k is lost), never wider. Branches with lookaheads, and branches that
// no j, k fit, are left out; nullopt when none is left. Errors as compile_regex.
// exact_only: nullopt unless the result is exactly pattern and lengths (each branch has one
// repetition of varying count over a fixed-length part, or no string within the bounds):
// then it is the intersection itself, as counted repetition instead of an automaton.
std::optional<RegexExpr> compile_regex_within(GrammarBuilder& b, std::string_view pattern,
                                              CharEncoding encoding, bool search,
                                              uint32_t min_chars, uint32_t max_chars,
                                              bool exact_only = false);

// A whole grammar for the pattern over raw UTF-8 text.
std::shared_ptr<const Grammar> compile_regex_grammar(std::string_view pattern, bool search);

}  // namespace afm::guided
