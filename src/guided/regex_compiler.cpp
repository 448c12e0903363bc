// Lowers the parsed regex to grammar expressions; see regex_compiler.h.
#include "guided/regex_compiler.h"

#include <algorithm>

#include "base/error.h"
#include "guided/code_point_dfa.h"
#include "guided/regex_ambiguity.h"
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
  // *everything: set when the branch is found in every string (then so is the pattern).
  RegexExpr lower_branch(Node branch, bool search, bool* everything) {
    *everything = false;
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
    if (body.min_chars == 0) {
      *everything = true;
      return {any, 0, kUnbounded};
    }
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

// Lengths with every repetition of varying count read elastically (compile_regex_within):
// saturating arithmetic, kHuge standing for "unbounded or too long to matter".
constexpr uint64_t kHuge = uint64_t{1} << 62;

uint64_t sat_add(uint64_t a, uint64_t b) { return std::min(a + b, kHuge); }
uint64_t sat_mul(uint64_t a, uint64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kHuge / b ? kHuge : std::min(a * b, kHuge);
}

struct Elastic {
  uint64_t j, k;
  // X{a,b} with b > a read as X{min(a+j, b), min(b, a+k)}; fixed counts stay.
  std::pair<uint64_t, uint64_t> bounds(const Node& n) const {
    const uint64_t b = n.max == kUnbounded ? kHuge : n.max;
    if (b == n.min) return {n.min, n.min};
    return {std::min(n.min + j, b), std::min({b, n.min + k, uint64_t{kUnbounded} - 1})};
  }
  std::pair<uint64_t, uint64_t> lengths(const Node& n) const {
    switch (n.kind) {
      case Node::Kind::kChars:
        return {1, 1};
      case Node::Kind::kRepeat: {
        const auto [lo, hi] = lengths(n.kids[0]);
        const auto [m, x] = bounds(n);
        return {sat_mul(lo, m), sat_mul(hi, x)};
      }
      case Node::Kind::kAlt: {
        std::pair<uint64_t, uint64_t> out{kHuge, 0};
        for (const Node& kid : n.kids) {
          const auto [lo, hi] = lengths(kid);
          out = {std::min(out.first, lo), std::max(out.second, hi)};
        }
        return out;
      }
      default: {  // kConcat; anchors are empty
        std::pair<uint64_t, uint64_t> out{0, 0};
        for (const Node& kid : n.kids) {
          const auto [lo, hi] = lengths(kid);
          out = {sat_add(out.first, lo), sat_add(out.second, hi)};
        }
        return out;
      }
    }
  }
  void apply(Node& n) const {
    if (n.kind == Node::Kind::kRepeat) {
      const auto [m, x] = bounds(n);
      n.min = static_cast<uint32_t>(m);
      n.max = static_cast<uint32_t>(x);
    }
    for (Node& kid : n.kids) apply(kid);
  }
};

Node star_of(CodePointSet set) {
  Node chars{Node::Kind::kChars};
  chars.chars = std::move(set);
  Node rep{Node::Kind::kRepeat};
  rep.min = 0;
  rep.max = kUnbounded;
  rep.kids.push_back(std::move(chars));
  return rep;
}

// A searched branch's unanchored ends made explicit, as repetitions the bounds can count: the
// ends trimmed as lower_branch trims them, then any characters before and after (before a
// branch of one class C, characters outside C: the first C is the match). A branch that
// matches the empty string is found in every string: any characters, once.
void pad_search_ends(Node& branch, bool anchored_start, bool anchored_end) {
  auto& kids = branch.kids;
  if (!anchored_end) Lowerer::trim_search_end(kids, /*back=*/true);
  if (!anchored_start) Lowerer::trim_search_end(kids, /*back=*/false);
  if (kids.empty()) {
    kids.push_back(star_of(CodePointSet::all()));
    return;
  }
  const CodePointSet* single = kids.size() == 1 ? Lowerer::single_class(kids[0]) : nullptr;
  const bool first_match = !anchored_start && !anchored_end && single != nullptr &&
                           !single->complement().empty();
  if (!anchored_start) {
    kids.insert(kids.begin(), star_of(first_match ? single->complement() : CodePointSet::all()));
  }
  if (!anchored_end) kids.push_back(star_of(CodePointSet::all()));
}

// The elastic reading of one branch (anchored, or padded) within [lo, hi], or nullopt.
std::optional<Elastic> fit_elastic(const Node& branch, uint64_t lo, uint64_t hi) {
  Elastic e{0, 0};
  if (e.lengths(branch).second > hi) return std::nullopt;
  uint64_t good = 0, bad = hi + 1;  // the largest k whose longest string fits
  while (bad - good > 1) {
    e.k = good + (bad - good) / 2;
    (e.lengths(branch).second <= hi ? good : bad) = e.k;
  }
  e.k = good;
  e.j = e.k;
  if (e.lengths(branch).first < lo) return std::nullopt;
  uint64_t low_bad = 0, low_good = e.k;  // then the smallest j whose shortest string fits
  if (Elastic{0, e.k}.lengths(branch).first >= lo) low_good = 0;
  while (low_good - low_bad > 1) {
    e.j = low_bad + (low_good - low_bad) / 2;
    (e.lengths(branch).first >= lo ? low_good : low_bad) = e.j;
  }
  e.j = low_good;
  return e;
}

// Lookaheads intersect languages, which rules cannot: the regular layer builds the automaton.
// Also the route of patterns whose rules would be ambiguous (regex_ambiguity.h).
RegexExpr compile_through_dfa(GrammarBuilder& b, std::string_view pattern, CharEncoding encoding,
                              bool search,
                              size_t max_states = CodePointDfa::kDefaultMaxStates) {
  const CodePointDfa dfa = CodePointDfa::from_regex(pattern, search, max_states).minimized();
  if (dfa.empty()) return {b.nothing(), 0, 0};
  const auto [min_chars, max_chars] = dfa.length_range();
  return {dfa.lower(b, encoding), min_chars, max_chars};
}

// Patterns whose rules would be ambiguous go through their automaton when it stays this small
// (its construction is bounded by the states; longer patterns, such as a 100 KB alternation,
// keep their rules, whose sets grow with the pattern rather than the text).
constexpr size_t kMaxAutomatonPatternBytes = 4096;
constexpr size_t kMaxAutomatonStates = 4096;

}  // namespace

RegexExpr compile_regex(GrammarBuilder& b, std::string_view pattern, CharEncoding encoding,
                        bool search, bool trusted_rules) {
  Node root = regex::parse(pattern);
  if (regex::has_lookahead(root)) return compile_through_dfa(b, pattern, encoding, search);
  if (!trusted_rules && pattern.size() <= kMaxAutomatonPatternBytes &&
      rules_grow_with_text(root, search)) {
    try {
      return compile_through_dfa(b, pattern, encoding, search, kMaxAutomatonStates);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kUnsupported) throw;
      // Past the automaton's budget: the rules (the same language, ambiguous).
    }
  }
  Lowerer lowerer(b, pattern, encoding);
  std::vector<Expr> options;
  RegexExpr out{b.empty(), kUnbounded, 0};
  for (Node& branch : root.kids) {
    bool everything = false;
    RegexExpr r = lowerer.lower_branch(std::move(branch), search, &everything);
    // Every other branch's strings are among this one's: alone, it keeps the sets small.
    if (everything) return r;
    options.push_back(r.expr);
    out.min_chars = std::min(out.min_chars, r.min_chars);
    out.max_chars = std::max(out.max_chars, r.max_chars);
  }
  out.expr = b.alt(std::move(options));
  return out;
}

// Whether bounding the repetitions keeps every string of the branch within the lengths: one
// repetition of varying count, over something of one fixed nonzero length, in a branch whose
// other parts all have fixed lengths. Its counts n then give the lengths F + w n, and the
// chosen j, k keep exactly the n that fit.
bool elastic_is_exact(const Node& branch) {
  size_t varying = 0;
  bool exact = true;
  auto visit = [&](auto&& self, const Node& n, bool inside_varying) -> void {
    if (n.kind == Node::Kind::kRepeat && n.max != n.min) {
      ++varying;
      const auto [lo, hi] = Elastic{0, 0}.lengths(n.kids[0]);
      exact = exact && !inside_varying && lo == hi && lo > 0;
      self(self, n.kids[0], true);
      return;
    }
    if (n.kind == Node::Kind::kAlt && n.kids.size() > 1) {
      const auto [lo, hi] = Elastic{0, 0}.lengths(n);
      exact = exact && lo == hi;
    }
    for (const Node& kid : n.kids) self(self, kid, inside_varying);
  };
  visit(visit, branch, false);
  return exact && varying <= 1;
}

std::optional<RegexExpr> compile_regex_within(GrammarBuilder& b, std::string_view pattern,
                                              CharEncoding encoding, bool search,
                                              uint32_t min_chars, uint32_t max_chars,
                                              bool exact_only) {
  Node root = regex::parse(pattern);
  std::vector<std::pair<Node, Elastic>> kept;
  for (Node& branch : root.kids) {
    const auto [anchored_start, anchored_end] = regex::strip_anchors(branch, search);
    if (regex::has_lookahead(branch)) {
      if (exact_only) return std::nullopt;
      continue;
    }
    if (!anchored_start || !anchored_end) pad_search_ends(branch, anchored_start, anchored_end);
    // With that shape, no fit means no string of the branch within the bounds: leaving the
    // branch out is exact too.
    if (exact_only && !elastic_is_exact(branch)) return std::nullopt;
    const std::optional<Elastic> fit = fit_elastic(branch, min_chars, max_chars);
    if (fit) kept.emplace_back(std::move(branch), *fit);
  }
  Lowerer lowerer(b, pattern, encoding);
  std::vector<Expr> options;
  RegexExpr out{b.empty(), kUnbounded, 0};
  for (auto& [branch, fit] : kept) {
    fit.apply(branch);
    RegexExpr r = lowerer.lower(branch);
    if (r.min_chars < min_chars || r.max_chars > max_chars) continue;  // cannot happen; be safe
    options.push_back(r.expr);
    out.min_chars = std::min(out.min_chars, r.min_chars);
    out.max_chars = std::max(out.max_chars, r.max_chars);
  }
  if (options.empty()) return std::nullopt;
  out.expr = b.alt(std::move(options));
  return out;
}

std::shared_ptr<const Grammar> compile_regex_grammar(std::string_view pattern, bool search) {
  GrammarBuilder b;
  RegexExpr r = compile_regex(b, pattern, CharEncoding::kUtf8, search);
  return b.build(b.rule("regex", r.expr));
}

}  // namespace afm::guided
