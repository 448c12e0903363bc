// Grammar files in GBNF, the grammar notation of llama.cpp, lowered to the grammar IR.
//
//   root  ::= "Answer: " ("yes" | "no") ("." | "!")? "\n"
//   list  ::= item ("," ws item){0,9}      # comments run to the end of the line
//   item  ::= [a-zA-Z_] [a-zA-Z0-9_]* | [^\x00-\x1f,]+
//
// Syntax (docs/guided.md, "Grammar files (GBNF)", has the full rules):
//  - A rule is `name ::= alternatives`; names use letters, digits and '-'. A rule ends at the
//    end of its line; a line break right after '|', inside parentheses, or before a line that
//    starts with '|' continues it. Rules may be used before they are defined, recursion
//    (left recursion included: the matcher is an Earley recogniser) is fine, and rules that
//    the start rule never reaches are checked for syntax only.
//  - Terminals are Unicode code points, matched as their UTF-8 bytes: string literals "..."
//    and character classes [...] / [^...] with ranges, both with the escapes \xHH \uHHHH
//    \UHHHHHHHH \t \r \n \\ \" \[ \] \- (an escape names a code point: "\xff" is U+00FF);
//    '.' is any code point. Grouping ( ), alternation |, postfix * + ? {m} {m,} {m,n}.
//  - Not supported (kUnsupported): llama.cpp's token references <[id]> / <token>, and
//    repetition counts above 100000.
//
// Errors: afm::Error naming "gbnf:LINE:COLUMN:" (1-based; the column counts bytes) and what
// was expected there. kInvalidArgument for syntax errors, undefined rules (at their first
// use), rules defined twice, a missing start rule, and reachable rules that can derive no
// finite string (e.g. `a ::= "x" a`); kUnsupported for the constructs above and for grammars
// larger than the builder allows. Input is untrusted: nesting depth is bounded, nothing
// recurses on input length.
// Thread safety: reentrant functions; the returned Grammar is immutable and shareable.
#pragma once

#include <memory>
#include <string_view>

#include "guided/grammar.h"

namespace afm::guided {

// The whole grammar, starting at rule `root`.
std::shared_ptr<const Grammar> compile_gbnf(std::string_view text, std::string_view root = "root");

// Adds every rule of `text` to `builder` (so a GBNF fragment can sit inside a larger grammar)
// and returns the rule named `root`. The same checks and errors as compile_gbnf().
RuleId add_gbnf_rules(GrammarBuilder& builder, std::string_view text, std::string_view root);

}  // namespace afm::guided
