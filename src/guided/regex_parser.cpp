// Recursive-descent parser for the ECMA-262 regex subset.
#include "guided/regex_parser.h"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "guided/unicode_properties.h"

namespace afm::guided::regex {

namespace {

constexpr int kMaxDepth = 200;
constexpr uint32_t kMaxCount = 100000;

CodePointSet digit_class() { return CodePointSet::of('0', '9'); }

CodePointSet word_class() {
  CodePointSet s = CodePointSet::of('0', '9');
  s.add('A', 'Z');
  s.add('a', 'z');
  s.add('_', '_');
  return s;
}

CodePointSet space_class() {  // ECMA WhiteSpace + LineTerminator
  CodePointSet s = CodePointSet::of('\t', '\r');
  for (uint32_t cp : {0x20u, 0xA0u, 0x1680u, 0x2028u, 0x2029u, 0x202Fu, 0x205Fu, 0x3000u,
                      0xFEFFu}) {
    s.add(cp, cp);
  }
  s.add(0x2000, 0x200A);
  return s;
}

// Code points ECMA-262 and Python's `re` (what the `jsonschema` package validates with) class
// differently: U+FEFF is ECMA whitespace only; U+001C-U+001F and U+0085 are Python whitespace
// only. Generated text must be valid under either reading, so \s and \S produce neither.
CodePointSet without_disputed_space(const CodePointSet& s) {
  CodePointSet out = s.complement();
  out.add(0x1C, 0x1F);
  out.add(0x85, 0x85);
  out.add(0xFEFF, 0xFEFF);
  return out.complement();
}

CodePointSet dot_class() {
  CodePointSet s;
  s.add('\n', '\n');
  s.add('\r', '\r');
  s.add(0x2028, 0x2029);
  return s.complement();
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Parser {
 public:
  explicit Parser(std::string_view p) : p_(p) {}

  Node parse_all() {
    Node root = parse_alt(0);
    if (pos_ < p_.size()) syntax_error(p_, pos_, "unmatched ')'");
    return root;
  }

 private:
  bool at_end() const { return pos_ >= p_.size(); }
  char peek() const { return p_[pos_]; }

  uint32_t next_code_point() {
    const auto b0 = static_cast<uint8_t>(p_[pos_]);
    int len = b0 < 0x80 ? 1 : (b0 >> 5) == 6 ? 2 : (b0 >> 4) == 14 ? 3 : (b0 >> 3) == 30 ? 4 : 0;
    if (len == 0 || pos_ + len > p_.size()) syntax_error(p_, pos_, "invalid UTF-8");
    uint32_t cp = len == 1 ? b0 : b0 & (0x7F >> len);
    for (int i = 1; i < len; ++i) {
      const auto c = static_cast<uint8_t>(p_[pos_ + i]);
      if ((c & 0xC0) != 0x80) syntax_error(p_, pos_, "invalid UTF-8");
      cp = (cp << 6) | (c & 0x3F);
    }
    pos_ += len;
    return cp;
  }

  Node parse_alt(int depth) {
    if (depth > kMaxDepth) unsupported(p_, pos_, "nesting deeper than 200 groups");
    Node alt{Node::Kind::kAlt};
    alt.offset = pos_;
    alt.kids.push_back(parse_concat(depth));
    while (!at_end() && peek() == '|') {
      ++pos_;
      alt.kids.push_back(parse_concat(depth));
    }
    return alt;
  }

  Node parse_concat(int depth) {
    Node seq{Node::Kind::kConcat};
    seq.offset = pos_;
    while (!at_end() && peek() != '|' && peek() != ')') seq.kids.push_back(parse_quantified(depth));
    return seq;
  }

  // Reads {m}, {m,} or {m,n} at pos_; false (pos_ unchanged) when it is not a quantifier.
  bool read_braces(uint32_t* min, uint32_t* max) {
    size_t i = pos_ + 1;
    auto number = [&](uint32_t* out) {
      size_t start = i;
      uint64_t v = 0;
      while (i < p_.size() && p_[i] >= '0' && p_[i] <= '9') {
        v = std::min<uint64_t>(v * 10 + (p_[i] - '0'), uint64_t{kMaxCount} + 1);
        ++i;
      }
      *out = static_cast<uint32_t>(v);
      return i > start;
    };
    if (!number(min)) return false;
    *max = *min;
    if (i < p_.size() && p_[i] == ',') {
      ++i;
      if (!number(max)) *max = kUnbounded;
    }
    if (i >= p_.size() || p_[i] != '}') return false;
    if (*min > kMaxCount || (*max != kUnbounded && *max > kMaxCount)) {
      unsupported(p_, pos_, "repetition count above 100000");
    }
    if (*max < *min) syntax_error(p_, pos_, "numbers out of order in {} quantifier");
    pos_ = i + 1;
    return true;
  }

  bool read_quantifier(uint32_t* min, uint32_t* max) {
    if (at_end()) return false;
    switch (peek()) {
      case '*': *min = 0, *max = kUnbounded, ++pos_; break;
      case '+': *min = 1, *max = kUnbounded, ++pos_; break;
      case '?': *min = 0, *max = 1, ++pos_; break;
      case '{':
        if (!read_braces(min, max)) return false;
        break;
      default: return false;
    }
    if (!at_end() && peek() == '?') ++pos_;  // lazy: same language
    return true;
  }

  Node parse_quantified(int depth) {
    const size_t start = pos_;
    Node atom = parse_atom(depth);
    uint32_t min, max;
    if (!read_quantifier(&min, &max)) return atom;
    if (atom.kind == Node::Kind::kStart || atom.kind == Node::Kind::kEnd ||
        atom.kind == Node::Kind::kLook) {
      syntax_error(p_, start, "quantifier on an assertion");
    }
    Node rep{Node::Kind::kRepeat};
    rep.offset = start;
    rep.min = min;
    rep.max = max;
    rep.kids.push_back(std::move(atom));
    uint32_t m2, x2;
    if (read_quantifier(&m2, &x2)) syntax_error(p_, pos_, "nothing to repeat");
    return rep;
  }

  static Node chars(CodePointSet set, size_t offset) {
    Node n{Node::Kind::kChars};
    n.chars = std::move(set);
    n.offset = offset;
    return n;
  }

  Node parse_atom(int depth) {
    const size_t start = pos_;
    const char c = peek();
    switch (c) {
      case '(': return parse_group(depth);
      case '[': return chars(parse_class(), start);
      case '.': ++pos_; return chars(dot_class(), start);
      case '^': ++pos_; return Node(Node::Kind::kStart, start);
      case '$': ++pos_; return Node(Node::Kind::kEnd, start);
      case '\\': return chars(parse_escape(false), start);
      case '*': case '+': case '?': syntax_error(p_, start, "nothing to repeat");
      case '{': {
        uint32_t m, x;
        if (read_braces(&m, &x)) syntax_error(p_, start, "nothing to repeat");
        ++pos_;
        return chars(CodePointSet::of('{', '{'), start);
      }
      default: {
        uint32_t cp = next_code_point();
        return chars(CodePointSet::of(cp, cp), start);
      }
    }
  }

  Node parse_group(int depth) {
    const size_t start = pos_;
    ++pos_;  // '('
    if (p_.substr(pos_, 2) == "?:") {
      pos_ += 2;
    } else if (p_.substr(pos_, 2) == "?=" || p_.substr(pos_, 2) == "?!") {
      Node look{Node::Kind::kLook, start};
      look.negative = p_[pos_ + 1] == '!';
      pos_ += 2;
      look.kids.push_back(parse_alt(depth + 1));
      if (at_end() || peek() != ')') syntax_error(p_, start, "unterminated group");
      ++pos_;
      return look;
    } else if (p_.substr(pos_, 3) == "?<=" || p_.substr(pos_, 3) == "?<!") {
      Node look{Node::Kind::kLook, start};
      look.negative = p_[pos_ + 2] == '!';
      look.behind = true;
      pos_ += 3;
      look.kids.push_back(parse_alt(depth + 1));
      if (at_end() || peek() != ')') syntax_error(p_, start, "unterminated group");
      ++pos_;
      return look;
    } else if (p_.substr(pos_, 2) == "?<") {
      size_t close = p_.find('>', pos_);
      if (close == std::string_view::npos) syntax_error(p_, start, "unterminated group name");
      pos_ = close + 1;
    } else if (!at_end() && peek() == '?') {
      syntax_error(p_, start, "invalid group");
    }
    Node inner = parse_alt(depth + 1);
    if (at_end() || peek() != ')') syntax_error(p_, start, "unterminated group");
    ++pos_;
    inner.offset = start;
    return inner;
  }

  uint32_t read_hex(size_t digits, size_t start) {
    uint32_t v = 0;
    for (size_t i = 0; i < digits; ++i) {
      if (at_end() || hex_value(peek()) < 0) syntax_error(p_, start, "invalid hex escape");
      v = v * 16 + hex_value(p_[pos_++]);
    }
    return v;
  }

  uint32_t read_unicode_escape(size_t start) {  // after "\u"
    if (!at_end() && peek() == '{') {
      ++pos_;
      uint32_t v = 0;
      size_t n = 0;
      while (!at_end() && hex_value(peek()) >= 0 && n < 8) v = v * 16 + hex_value(p_[pos_++]), ++n;
      if (n == 0 || at_end() || peek() != '}' || v > kMaxCodePoint) {
        syntax_error(p_, start, "invalid \\u{...} escape");
      }
      ++pos_;
      return v;
    }
    uint32_t v = read_hex(4, start);
    if (v >= 0xD800 && v <= 0xDBFF && p_.substr(pos_, 2) == "\\u") {  // surrogate pair
      size_t save = pos_;
      pos_ += 2;
      uint32_t lo = read_hex(4, start);
      if (lo >= 0xDC00 && lo <= 0xDFFF) return 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00);
      pos_ = save;
    }
    return v;
  }

  // After a backslash; `in_class` makes \b a backspace and \B/\-/ etc. class escapes.
  CodePointSet parse_escape(bool in_class) {
    const size_t start = pos_;
    ++pos_;  // '\'
    if (at_end()) syntax_error(p_, start, "trailing backslash");
    const char c = p_[pos_++];
    auto one = [](uint32_t cp) { return CodePointSet::of(cp, cp); };
    switch (c) {
      case 'd': return digit_class();
      case 'D': return digit_class().complement();
      case 'w': return word_class();
      case 'W': return word_class().complement();
      case 's': return without_disputed_space(space_class());
      case 'S': return without_disputed_space(space_class().complement());
      case 'n': return one('\n');
      case 'r': return one('\r');
      case 't': return one('\t');
      case 'v': return one('\v');
      case 'f': return one('\f');
      case 'x': return one(read_hex(2, start));
      case 'u': return one(read_unicode_escape(start));
      case 'c': {
        if (at_end() || !std::isalpha(static_cast<unsigned char>(peek()))) {
          syntax_error(p_, start, "invalid \\c escape");
        }
        return one(static_cast<uint32_t>(p_[pos_++]) % 32);
      }
      case 'b':
        if (in_class) return one('\b');
        unsupported(p_, start, "word boundary \\b");
      case 'B': unsupported(p_, start, "word boundary \\B");
      case 'k': unsupported(p_, start, "named backreference \\k");
      case 'p': case 'P': return property_escape(c == 'P', start);
      case '0':
        if (!at_end() && std::isdigit(static_cast<unsigned char>(peek()))) {
          unsupported(p_, start, "octal escape");
        }
        return one(0);
      default:
        if (c >= '1' && c <= '9') unsupported(p_, start, "backreference");
        if (std::isalnum(static_cast<unsigned char>(c))) {
          syntax_error(p_, start, std::string("invalid escape \\") + c);
        }
        --pos_;
        uint32_t cp = next_code_point();
        return one(cp);
    }
  }

  // After "\\p" or "\\P": `{name}`, a set from unicode_properties.h. A negated property is
  // the assigned code points outside it, never unassigned ones (see that header).
  CodePointSet property_escape(bool negated, size_t start) {
    if (at_end() || peek() != '{') syntax_error(p_, start, "\\p without {name}");
    const size_t close = p_.find('}', pos_);
    if (close == std::string_view::npos) syntax_error(p_, start, "unterminated \\p{...}");
    const std::string_view name = p_.substr(pos_ + 1, close - pos_ - 1);
    pos_ = close + 1;
    std::optional<CodePointSet> set = unicode_property(name);
    if (!set) unsupported(p_, start, "Unicode property \\p{" + std::string(name) + "}");
    ++properties_seen_;
    return negated ? assigned_code_points().intersect(set->complement()) : *set;
  }

  // One class atom; sets *single when it is one code point (usable as a range end).
  CodePointSet class_atom(bool* single, uint32_t* cp) {
    const size_t before = pos_;
    CodePointSet s;
    if (peek() == '\\') {
      s = parse_escape(true);
    } else {
      uint32_t v = next_code_point();
      s = CodePointSet::of(v, v);
    }
    *single = s.ranges().size() == 1 && s.ranges()[0].first == s.ranges()[0].second &&
              !(p_[before] == '\\' && std::string_view("dDwWsSpP").find(p_[before + 1]) !=
                                          std::string_view::npos);
    if (*single) *cp = s.ranges()[0].first;
    return s;
  }

  CodePointSet parse_class() {
    const size_t start = pos_;
    ++pos_;  // '['
    bool negate = !at_end() && peek() == '^';
    if (negate) ++pos_;
    const size_t properties_before = properties_seen_;
    CodePointSet set;
    while (true) {
      if (at_end()) syntax_error(p_, start, "unterminated character class");
      if (peek() == ']') break;
      bool single;
      uint32_t lo;
      CodePointSet atom = class_atom(&single, &lo);
      if (single && pos_ + 1 < p_.size() && peek() == '-' && p_[pos_ + 1] != ']') {
        const size_t dash = pos_++;
        bool single_hi;
        uint32_t hi;
        CodePointSet hi_atom = class_atom(&single_hi, &hi);
        if (!single_hi) {  // [a-\d]: the dash is a literal
          set.add(atom);
          set.add('-', '-');
          set.add(hi_atom);
          continue;
        }
        if (hi < lo) syntax_error(p_, dash, "range out of order in character class");
        set.add(lo, hi);
        continue;
      }
      set.add(atom);
    }
    ++pos_;  // ']'
    if (!negate) return set;
    // [^\p{L}] names only assigned code points for the same reason \P{L} does.
    return properties_seen_ == properties_before ? set.complement()
                                                 : assigned_code_points().intersect(set.complement());
  }

  std::string_view p_;
  size_t pos_ = 0;
  size_t properties_seen_ = 0;  // \p / \P escapes parsed so far
};

}  // namespace

[[noreturn]] void unsupported(std::string_view pattern, size_t offset, const std::string& what) {
  throw_error(ErrorCode::kUnsupported, "regex /" + std::string(pattern) + "/: " + what +
                                           " at offset " + std::to_string(offset) +
                                           " is not supported");
}

[[noreturn]] void syntax_error(std::string_view pattern, size_t offset, const std::string& what) {
  throw_error(ErrorCode::kInvalidArgument, "regex /" + std::string(pattern) + "/: " + what +
                                               " at offset " + std::to_string(offset));
}

namespace {

// Whether a lookahead's inner pattern is "any one character" as written (`[\s\S]`, `[^]`,
// `[\d\D]`; not `(.|\n)`, which leaves out \r): every code point but those \s and \S leave out on purpose (the whitespace
// ECMA-262 and Python's `re` disagree on), so the author's set is every character.
bool any_one_character(const Node& inner) {
  if (inner.kind != Node::Kind::kAlt) return false;
  CodePointSet set;
  for (const Node& alt : inner.kids) {
    if (alt.kids.size() != 1 || alt.kids[0].kind != Node::Kind::kChars) return false;
    set.add(alt.kids[0].chars);
  }
  set.add(without_disputed_space(CodePointSet::all()).complement());
  return set.complement().empty();
}

}  // namespace

namespace {

// Structural equality of two trees (offsets aside): equal trees match the same strings.
bool same_tree(const Node& a, const Node& b) {
  if (a.kind != b.kind || a.min != b.min || a.max != b.max || a.negative != b.negative ||
      a.behind != b.behind || a.kids.size() != b.kids.size() ||
      a.chars.ranges() != b.chars.ranges()) {
    return false;
  }
  for (size_t i = 0; i < a.kids.size(); ++i) {
    if (!same_tree(a.kids[i], b.kids[i])) return false;
  }
  return true;
}

// Drops every alternative equal to an earlier one of the same alternation, bottom up, and
// returns the tree's structural hash. Why: A|A is A, but each copy is one more Earley item per
// position (a pattern of a hundred empty alternatives made every byte step cost ~1,800 items).
// Candidates are compared only when their hashes agree, so a long alternation of distinct
// branches costs linear time. Depth is bounded by the parser (kMaxDepth).
uint64_t drop_repeated_alternatives(Node& n) {
  uint64_t h = static_cast<uint64_t>(n.kind) * 0x9E3779B97F4A7C15ull;
  const auto mix = [&h](uint64_t v) { h = (h ^ v) * 0x100000001B3ull + (h >> 29); };
  mix(n.min);
  mix(n.max);
  mix(uint64_t{n.negative} | uint64_t{n.behind} << 1);
  for (const auto& [lo, hi] : n.chars.ranges()) mix(uint64_t{lo} << 32 | hi);
  std::vector<uint64_t> hashes;
  hashes.reserve(n.kids.size());
  for (Node& kid : n.kids) hashes.push_back(drop_repeated_alternatives(kid));
  if (n.kind == Node::Kind::kAlt && n.kids.size() > 1) {
    std::unordered_multimap<uint64_t, size_t> kept;  // hash -> index into `unique`
    std::vector<Node> unique;
    std::vector<uint64_t> unique_hashes;
    for (size_t i = 0; i < n.kids.size(); ++i) {
      const auto [first, last] = kept.equal_range(hashes[i]);
      const bool repeated = std::any_of(first, last, [&](const auto& entry) {
        return same_tree(unique[entry.second], n.kids[i]);
      });
      if (repeated) continue;
      kept.emplace(hashes[i], unique.size());
      unique.push_back(std::move(n.kids[i]));
      unique_hashes.push_back(hashes[i]);
    }
    n.kids = std::move(unique);
    hashes = std::move(unique_hashes);
  }
  for (uint64_t k : hashes) mix(k);
  return h;
}

}  // namespace

// (?![\s\S]) closing a top-level branch: no character follows, which is $. Then repeated
// alternatives are dropped (drop_repeated_alternatives).
Node parse(std::string_view pattern) {
  Node root = Parser(pattern).parse_all();
  for (Node& branch : root.kids) {
    if (!branch.kids.empty() && branch.kids.back().kind == Node::Kind::kLook &&
        !branch.kids.back().behind && branch.kids.back().negative &&
        any_one_character(branch.kids.back().kids[0])) {
      branch.kids.back() = Node(Node::Kind::kEnd, branch.kids.back().offset);
    }
  }
  drop_repeated_alternatives(root);
  return root;
}

namespace {

// Whether a sequence opens (front) or closes with its anchor, looking into a group at that
// edge: `(^a|^b)c` opens with ^ in every alternative.
bool edge_anchored(const Node& seq, bool front) {
  if (seq.kids.empty()) return false;
  const Node& edge = front ? seq.kids.front() : seq.kids.back();
  if (edge.kind == (front ? Node::Kind::kStart : Node::Kind::kEnd)) return true;
  return edge.kind == Node::Kind::kAlt &&
         std::all_of(edge.kids.begin(), edge.kids.end(),
                     [&](const Node& alt) { return edge_anchored(alt, front); });
}

// Removes the anchors at a sequence's edge, in a group there too. Only where that edge is the
// string's start (end) in every match: there they always hold.
void remove_edge_anchors(Node& seq, bool front) {
  auto& kids = seq.kids;
  const Node::Kind anchor = front ? Node::Kind::kStart : Node::Kind::kEnd;
  while (!kids.empty() && (front ? kids.front() : kids.back()).kind == anchor) {
    kids.erase(front ? kids.begin() : kids.end() - 1);
  }
  if (kids.empty()) return;
  Node& edge = front ? kids.front() : kids.back();
  if (edge.kind != Node::Kind::kAlt) return;
  for (Node& alt : edge.kids) remove_edge_anchors(alt, front);
}

}  // namespace

BranchEnds strip_anchors(Node& branch, bool search) {
  BranchEnds ends{!search, !search};
  ends.anchored_start = ends.anchored_start || edge_anchored(branch, true);
  ends.anchored_end = ends.anchored_end || edge_anchored(branch, false);
  if (ends.anchored_start) remove_edge_anchors(branch, true);
  if (ends.anchored_end) remove_edge_anchors(branch, false);
  return ends;
}

namespace {

const Node* find_lookahead(const Node& n) {
  if (n.kind == Node::Kind::kLook) return &n;
  for (const Node& k : n.kids) {
    if (const Node* found = find_lookahead(k)) return found;
  }
  return nullptr;
}

}  // namespace

bool has_lookahead(const Node& n) { return find_lookahead(n) != nullptr; }

namespace {

// The one length in code points of every string a node matches, or nullopt (anchors and
// lookaheads are empty).
std::optional<uint32_t> fixed_length(const Node& n) {
  switch (n.kind) {
    case Node::Kind::kChars:
      return 1;
    case Node::Kind::kRepeat: {
      if (n.min != n.max) return std::nullopt;
      const std::optional<uint32_t> one = fixed_length(n.kids[0]);
      if (!one || (n.min != 0 && *one > kUnbounded / n.min)) return std::nullopt;
      return *one * n.min;
    }
    case Node::Kind::kAlt: {
      std::optional<uint32_t> all;
      for (const Node& k : n.kids) {
        const std::optional<uint32_t> len = fixed_length(k);
        if (!len || (all && *all != *len)) return std::nullopt;
        all = len;
      }
      return all;
    }
    case Node::Kind::kConcat: {
      uint64_t sum = 0;
      for (const Node& k : n.kids) {
        const std::optional<uint32_t> len = fixed_length(k);
        if (!len || (sum += *len) >= kUnbounded) return std::nullopt;
      }
      return static_cast<uint32_t>(sum);
    }
    default:
      return 0;
  }
}

}  // namespace

std::vector<Node> take_lookaheads(std::string_view pattern, Node& branch, bool search) {
  auto& kids = branch.kids;
  const bool anchored = !search || (!kids.empty() && kids.front().kind == Node::Kind::kStart);
  std::vector<Node> looks;
  // Lookbehinds right before the closing $ (or closing a full match): they look back from the
  // string's end.
  size_t end = kids.size();
  while (end > 0 && kids[end - 1].kind == Node::Kind::kEnd) --end;
  if (end < kids.size() || !search) {
    while (end > 0 && kids[end - 1].kind == Node::Kind::kLook && kids[end - 1].behind) {
      looks.push_back(std::move(kids[end - 1]));
      kids.erase(kids.begin() + static_cast<std::ptrdiff_t>(end - 1));
      --end;
    }
  }
  uint32_t position = 0;  // code points before the current kid, while they are fixed
  bool fixed = true;
  for (size_t i = 0; i < kids.size();) {
    if (kids[i].kind != Node::Kind::kLook) {
      const std::optional<uint32_t> len = fixed_length(kids[i]);
      fixed = fixed && len && uint64_t{position} + *len < kUnbounded;
      if (fixed) position += *len;
      ++i;
      continue;
    }
    if (!anchored || !fixed || kids[i].behind) misplaced_anchor(pattern, kids[i]);
    kids[i].min = position;  // where it looks, for the caller
    looks.push_back(std::move(kids[i]));
    kids.erase(kids.begin() + static_cast<std::ptrdiff_t>(i));
  }
  if (const Node* other = find_lookahead(branch)) misplaced_anchor(pattern, *other);
  return looks;
}

std::optional<Node> split_start_lookaheads(Node& branch, bool search) {
  auto& kids = branch.kids;
  auto looks_at_start = [](const Node& n) {
    if (n.kind != Node::Kind::kLook || n.behind || n.kids.empty()) return false;
    for (const Node& alt : n.kids[0].kids) {
      if (alt.kids.empty() || alt.kids.front().kind != Node::Kind::kStart) return false;
    }
    return true;
  };
  size_t leading = 0;
  bool all_negative = true;
  while (leading < kids.size() && looks_at_start(kids[leading])) {
    all_negative = all_negative && kids[leading].negative;
    ++leading;
  }
  if (!search || leading == 0) return std::nullopt;
  std::optional<Node> later;
  if (all_negative) {
    later = branch;
    auto& rest = later->kids;
    rest.erase(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(leading));
    Node skip(Node::Kind::kRepeat, branch.offset);
    skip.min = 1;
    skip.max = kUnbounded;
    Node any(Node::Kind::kChars, branch.offset);
    any.chars = CodePointSet::all();
    skip.kids.push_back(std::move(any));
    rest.insert(rest.begin(), std::move(skip));
    rest.insert(rest.begin(), Node(Node::Kind::kStart, branch.offset));
  }
  kids.insert(kids.begin(), Node(Node::Kind::kStart, branch.offset));
  return later;
}

[[noreturn]] void misplaced_anchor(std::string_view pattern, const Node& anchor) {
  if (anchor.kind == Node::Kind::kLook && anchor.behind) {
    unsupported(pattern, anchor.offset,
                "lookbehind that is not right before the $ closing a top-level branch");
  }
  if (anchor.kind == Node::Kind::kLook) {
    unsupported(pattern, anchor.offset,
                "lookahead that is not at a fixed position of an anchored top-level branch");
  }
  unsupported(pattern, anchor.offset,
              std::string("anchor ") + (anchor.kind == Node::Kind::kStart ? "^" : "$") +
                  " that is not at the start/end of a top-level branch");
}

}  // namespace afm::guided::regex
