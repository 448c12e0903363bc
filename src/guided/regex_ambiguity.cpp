// The ambiguity test of regex_ambiguity.h.
#include "guided/regex_ambiguity.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "guided/grammar.h"
#include "guided/regex_parser.h"

namespace afm::guided {

namespace {

using regex::Node;
using Lengths = std::pair<uint64_t, uint64_t>;

constexpr uint64_t kHuge = kUnbounded;  // saturated: no longest match

uint64_t add(uint64_t a, uint64_t b) { return std::min(a + b, kHuge); }
uint64_t mul(uint64_t a, uint64_t m) {
  if (a == 0 || m == 0) return 0;
  return a >= kHuge || m >= kHuge ? kHuge : std::min(a * m, kHuge);
}

// Shortest and longest match in code points (kUnbounded: no longest); saturating.
Lengths lengths(const Node& n) {
  switch (n.kind) {
    case Node::Kind::kChars:
      return {1, 1};
    case Node::Kind::kConcat: {
      Lengths out{0, 0};
      for (const Node& k : n.kids) {
        const auto [lo, hi] = lengths(k);
        out = Lengths{add(out.first, lo), add(out.second, hi)};
      }
      return out;
    }
    case Node::Kind::kAlt: {
      Lengths out{kHuge, 0};
      for (const Node& k : n.kids) {
        const auto [lo, hi] = lengths(k);
        out = Lengths{std::min(out.first, lo), std::max(out.second, hi)};
      }
      return n.kids.empty() ? Lengths{0, 0} : out;
    }
    case Node::Kind::kRepeat: {
      const auto [lo, hi] = lengths(n.kids[0]);
      return {mul(lo, n.min), mul(hi, n.max == kUnbounded ? kHuge : n.max)};
    }
    default:  // anchors and lookarounds match no characters
      return {0, 0};
  }
}

bool holds_unbounded_repetition(const Node& n) {
  return std::any_of(n.kids.begin(), n.kids.end(), [](const Node& k) {
    return (k.kind == Node::Kind::kRepeat && k.max == kUnbounded) ||
           holds_unbounded_repetition(k);
  });
}

// Two parts of a sequence whose lengths vary, one of them without a longest match
// (`.*.*`, `[a-z]*[a-c]*`): each split between them is a parse.
bool splits_ambiguously(const Node& concat) {
  int varying = 0;
  bool unbounded = false;
  for (const Node& k : concat.kids) {
    const auto [lo, hi] = lengths(k);
    varying += lo != hi;
    unbounded = unbounded || hi >= kHuge;
  }
  return varying >= 2 && unbounded;
}

// A loop inside a repetition, or an ambiguous split, anywhere in the tree (the parser bounds
// its depth).
bool has_ambiguous_shape(const Node& n) {
  if (n.kind == Node::Kind::kRepeat) {
    if (n.max > 1 && holds_unbounded_repetition(n)) return true;
    if (n.max == kUnbounded) {
      const auto [lo, hi] = lengths(n.kids[0]);
      if (lo != hi) return true;
    }
  }
  if (n.kind == Node::Kind::kConcat && splits_ambiguously(n)) return true;
  return std::any_of(n.kids.begin(), n.kids.end(), has_ambiguous_shape);
}

}  // namespace

bool rules_grow_with_text(const Node& root, bool search) {
  for (const Node& branch : root.kids) {
    Node copy = branch;
    const auto [anchored_start, anchored_end] = regex::strip_anchors(copy, search);
    if (!anchored_start || !anchored_end) return true;
    if (has_ambiguous_shape(copy)) return true;
  }
  return false;
}

}  // namespace afm::guided
