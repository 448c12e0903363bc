// The regular layer's lookarounds: a regex branch's lookaheads (at fixed positions from its
// start) and closing lookbehinds, as intersections with (complements of) automata. See
// code_point_dfa.h and regex_parser.h (take_lookaheads) for where they are accepted.
#include "guided/code_point_dfa.h"

#include "guided/regex_parser.h"

namespace afm::guided {

namespace {

// A lookbehind's branch as the strings that end with it: `^[\s\S]*X$` (no `[\s\S]*` when X
// opens with ^, no second $ when it closes with one).
void anchor_at_end(regex::Node& b, size_t offset) {
  using Kind = regex::Node::Kind;
  if (b.kids.empty() || b.kids.front().kind != Kind::kStart) {
    regex::Node skip(Kind::kRepeat, offset);
    skip.min = 0;
    skip.max = kUnbounded;
    regex::Node any(Kind::kChars, offset);
    any.chars = CodePointSet::all();
    skip.kids.push_back(std::move(any));
    b.kids.insert(b.kids.begin(), std::move(skip));
    b.kids.insert(b.kids.begin(), regex::Node(Kind::kStart, offset));
  }
  if (b.kids.back().kind != Kind::kEnd) b.kids.push_back(regex::Node(Kind::kEnd, offset));
}

}  // namespace

// Branch by branch: the strings of the branch without its lookaheads, intersected with each
// lookahead's language (or its complement). At position p, (?=X) holds where the suffix from p
// has a prefix matching X: the strings .{p} X, anchored at the start and searched (X's own $
// still ends the string). Lookaheads inside X are handled the same way, recursively.
CodePointDfa CodePointDfa::with_lookaheads(regex::Node root, std::string_view pattern, bool search,
                                           size_t max_states) {
  CodePointDfa out = nothing();
  for (size_t i = 0; i < root.kids.size(); ++i) {
    if (std::optional<regex::Node> later = regex::split_start_lookaheads(root.kids[i], search)) {
      root.kids.push_back(std::move(*later));  // matches starting after position 0
    }
    regex::Node& branch = root.kids[i];
    std::vector<regex::Node> looks = regex::take_lookaheads(pattern, branch, search);
    regex::Node alone{regex::Node::Kind::kAlt, branch.offset};
    alone.kids.push_back(std::move(branch));
    CodePointDfa dfa = from_regex_tree(std::move(alone), pattern, search, max_states).minimized();
    for (regex::Node& look : looks) {
      regex::Node inner = std::move(look.kids[0]);
      if (look.behind) {
        // At the string's end: the strings with a suffix matching X (X's ^ is the start).
        for (regex::Node& b : inner.kids) anchor_at_end(b, look.offset);
        CodePointDfa holds = from_regex_tree(std::move(inner), pattern, true, max_states);
        if (look.negative) holds = holds.complement();
        dfa = intersect(dfa, holds, max_states).minimized();
        continue;
      }
      for (regex::Node& b : inner.kids) {
        // At position p (look.min): any p characters first, then X, anchored at the start. An
        // X branch opening with ^ holds only at p = 0.
        if (look.min > 0 && !b.kids.empty() && b.kids.front().kind == regex::Node::Kind::kStart) {
          b.kids.assign(1, regex::Node(regex::Node::Kind::kChars, look.offset));  // no string
          continue;
        }
        if (look.min > 0) {
          regex::Node skip(regex::Node::Kind::kRepeat, look.offset);
          skip.min = skip.max = look.min;
          regex::Node any(regex::Node::Kind::kChars, look.offset);
          any.chars = CodePointSet::all();
          skip.kids.push_back(std::move(any));
          b.kids.insert(b.kids.begin(), std::move(skip));
        }
        if (b.kids.empty() || b.kids.front().kind != regex::Node::Kind::kStart) {
          b.kids.insert(b.kids.begin(), regex::Node(regex::Node::Kind::kStart, look.offset));
        }
      }
      CodePointDfa holds = from_regex_tree(std::move(inner), pattern, true, max_states);
      if (look.negative) holds = holds.complement();
      dfa = intersect(dfa, holds, max_states).minimized();
    }
    out = unite(out, dfa, max_states).minimized();
  }
  return out;
}

}  // namespace afm::guided
