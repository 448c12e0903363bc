// Which regexes the mask layer should not take as rules: those whose rules are ambiguous in a
// way that makes the Earley sets grow with the text (regex_compiler.cpp then compiles them
// through their automaton, code_point_dfa.h, when it is small).
//
// Why: an Earley set holds one item per way the text so far can still be parsed. Rules from a
// searched branch (JSON Schema's `pattern` matches anywhere) keep one possible match start per
// position and one "any characters" per match end; a loop inside a repetition (`(.*a){20}`,
// `(a|ab)*`) keeps one per place a copy may have ended. The sets then grow linearly with the
// text and each byte step with them: over 800 bytes of "a", `(.*a){20}` took 33 s, searching
// for `ab` over 8 KB ~7 s. A minimised automaton lowered to rules is one rule per state and
// O(1) items per byte. Rules stay the default elsewhere: the mask layer's counted loops answer
// bounded repetitions from them, and they cost nothing to build.
//
// The test is syntactic and errs towards the automaton: a branch unanchored at either end, a
// repetition of more than one copy whose body holds an unbounded repetition, an unbounded
// repetition whose body's length varies, or a sequence with two parts of varying length, one
// of them unbounded (`^.*.*$`: every split between them is a parse). The language is the same
// either way.
#pragma once

namespace afm::guided {

namespace regex {
struct Node;
}

// `root`: regex::parse's tree (a kAlt of branches); `search`: JSON Schema semantics.
bool rules_grow_with_text(const regex::Node& root, bool search);

}  // namespace afm::guided
