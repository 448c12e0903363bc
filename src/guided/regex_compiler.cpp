// Lowers the parsed regex to grammar expressions; see regex_compiler.h.
#include "guided/regex_compiler.h"

#include <algorithm>

#include "guided/code_point_dfa.h"
#include "guided/regex_parser.h"

namespace afm::guided {

namespace {

using regex::Node;

uint32_t add_len(uint32_t a, uint32_t b) {
  return (a == kUnbounded || b == kUnbounded) ? kUnbounded : std::min<uint64_t>(
                                                                 uint64_t{a} + b, kUnbounded - 1);
}

uint32_t mul_len(uint32_t a, uint32_t n) {
  if (n == 0 || a == 0) return 0;
  if (a == kUnbounded || n == kUnbounded) return kUnbounded;
  return static_cast<uint32_t>(std::min<uint64_t>(uint64_t{a} * n, kUnbounded - 1));
}

class Lowerer {
 public:
  Lowerer(GrammarBuilder& b, std::string_view pattern, CharEncoding encoding)
      : b_(b), pattern_(pattern), encoding_(encoding) {}

  RegexExpr lower(const Node& n) {
    switch (n.kind) {
      case Node::Kind::kChars:
        return {encode_char_class(b_, n.chars, encoding_), 1, 1};
      case Node::Kind::kConcat: {
        std::vector<Expr> parts;
        RegexExpr out{b_.empty(), 0, 0};
        for (const Node& k : n.kids) {
          RegexExpr r = lower(k);
          parts.push_back(r.expr);
          out.min_chars = add_len(out.min_chars, r.min_chars);
          out.max_chars = add_len(out.max_chars, r.max_chars);
        }
        out.expr = b_.seq(std::move(parts));
        return out;
      }
      case Node::Kind::kAlt: {
        std::vector<Expr> options;
        RegexExpr out{b_.empty(), kUnbounded, 0};
        for (const Node& k : n.kids) {
          RegexExpr r = lower(k);
          options.push_back(r.expr);
          out.min_chars = std::min(out.min_chars, r.min_chars);
          out.max_chars = std::max(out.max_chars, r.max_chars);
        }
        out.expr = b_.alt(std::move(options));
        return out;
      }
      case Node::Kind::kRepeat: {
        RegexExpr r = lower(n.kids[0]);
        return {b_.repeat(r.expr, n.min, n.max), mul_len(r.min_chars, n.min),
                mul_len(r.max_chars, n.max)};
      }
      case Node::Kind::kStart:
      case Node::Kind::kEnd:
      case Node::Kind::kLook:
        break;
    }
    regex::misplaced_anchor(pattern_, n);
  }

  static bool nullable(const Node& n) {
    switch (n.kind) {
      case Node::Kind::kChars:
        return false;
      case Node::Kind::kRepeat:
        return n.min == 0 || nullable(n.kids[0]);
      case Node::Kind::kAlt:
        return std::any_of(n.kids.begin(), n.kids.end(), nullable);
      default:  // kConcat, and the zero-width anchors
        return std::all_of(n.kids.begin(), n.kids.end(), nullable);
    }
  }

  // Searching for P Q where Q can be empty finds exactly the strings that contain P (the padding
  // absorbs Q), and P X{m,n} is found exactly where P X{m} is. So an unanchored end of a branch
  // loses its nullable pieces and its last repetition keeps only its minimum: `[a-z]+` is
  // searched as `[a-z]`. Same language, but one match per position instead of one per start:
  // without it the Earley sets grow with every letter of the string.
  static void trim_search_end(std::vector<Node>& kids, bool back) {
    while (!kids.empty()) {
      Node& edge = back ? kids.back() : kids.front();
      if (nullable(edge)) {
        kids.erase(back ? kids.end() - 1 : kids.begin());
        continue;
      }
      if (edge.kind == Node::Kind::kRepeat) edge.max = edge.min;
      return;
    }
  }

  // The code points of a node that matches exactly one character from a class (`[a-z]`, or
  // `[a-z]{1}` as trimming leaves `[a-z]+`), or null.
  static const CodePointSet* single_class(const Node& n) {
    if (n.kind == Node::Kind::kChars) return &n.chars;
    if (n.kind == Node::Kind::kRepeat && n.min == 1 && n.max == 1) return single_class(n.kids[0]);
    if ((n.kind == Node::Kind::kConcat || n.kind == Node::Kind::kAlt) && n.kids.size() == 1) {
      return single_class(n.kids[0]);
    }
    return nullptr;
  }

  // One top-level branch: strip its leading ^ / trailing $ and pad unanchored ends.
  RegexExpr lower_branch(Node branch, bool search) {
    const auto [anchored_start, anchored_end] = regex::strip_anchors(branch, search);
    auto& kids = branch.kids;
    if (!anchored_end) trim_search_end(kids, /*back=*/true);
    if (!anchored_start) trim_search_end(kids, /*back=*/false);
    RegexExpr body = lower(branch);
    if (anchored_start && anchored_end) return body;
    Expr any = b_.star(encode_char_class(b_, CodePointSet::all(), encoding_));
    // A branch that matches the empty string is found in every string. Say so directly: the
    // padded form (`.*` becomes any* .* any*) is ambiguous at every position, which makes the
    // Earley sets grow with the text.
    if (body.min_chars == 0) return {any, 0, kUnbounded};
    std::vector<Expr> parts;
    const CodePointSet* single = kids.size() == 1 ? single_class(kids[0]) : nullptr;
    if (!anchored_start && !anchored_end && single != nullptr && !single->complement().empty()) {
      // Searching for one character class C: the first C is the match, so the padding before
      // it is (not C)*. Same language, but unambiguous: with any* there, every further C is
      // another possible match, each with its own trailing any*, and the Earley sets grow by
      // an item per C in the text.
      parts.push_back(b_.star(encode_char_class(b_, single->complement(), encoding_)));
    } else if (!anchored_start) {
      parts.push_back(any);
    }
    parts.push_back(body.expr);
    if (!anchored_end) parts.push_back(any);
    return {b_.seq(std::move(parts)), body.min_chars, kUnbounded};
  }

 private:
  GrammarBuilder& b_;
  std::string_view pattern_;
  CharEncoding encoding_;
};

// Lookaheads intersect languages, which rules cannot: the regular layer builds the automaton.
RegexExpr compile_through_dfa(GrammarBuilder& b, std::string_view pattern, CharEncoding encoding,
                              bool search) {
  const CodePointDfa dfa = CodePointDfa::from_regex(pattern, search).minimized();
  if (dfa.empty()) return {b.nothing(), 0, 0};
  const auto [min_chars, max_chars] = dfa.length_range();
  return {dfa.lower(b, encoding), min_chars, max_chars};
}

}  // namespace

RegexExpr compile_regex(GrammarBuilder& b, std::string_view pattern, CharEncoding encoding,
                        bool search) {
  Node root = regex::parse(pattern);
  if (regex::has_lookahead(root)) return compile_through_dfa(b, pattern, encoding, search);
  Lowerer lowerer(b, pattern, encoding);
  std::vector<Expr> options;
  RegexExpr out{b.empty(), kUnbounded, 0};
  for (Node& branch : root.kids) {
    RegexExpr r = lowerer.lower_branch(std::move(branch), search);
    options.push_back(r.expr);
    out.min_chars = std::min(out.min_chars, r.min_chars);
    out.max_chars = std::max(out.max_chars, r.max_chars);
  }
  out.expr = b.alt(std::move(options));
  return out;
}

std::shared_ptr<const Grammar> compile_regex_grammar(std::string_view pattern, bool search) {
  GrammarBuilder b;
  RegexExpr r = compile_regex(b, pattern, CharEncoding::kUtf8, search);
  return b.build(b.rule("regex", r.expr));
}

}  // namespace afm::guided
