// Code point sets and their byte-level encodings.
#include "guided/char_classes.h"

#include <algorithm>
#include <iterator>

#include "base/error.h"

namespace afm::guided {

namespace {

constexpr uint32_t kSurrogateLo = 0xD800, kSurrogateHi = 0xDFFF;

std::string utf8(uint32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

bool json_needs_escape(uint32_t cp) { return cp < 0x20 || cp == '"' || cp == '\\'; }

// Code points [lo, hi] that all have the same UTF-8 length and no surrogates.
Expr utf8_range(GrammarBuilder& b, uint32_t lo, uint32_t hi) {
  return lexicographic_range(b, utf8(lo), utf8(hi), 0x80, 0xBF);
}

void append_utf8_ranges(GrammarBuilder& b, uint32_t lo, uint32_t hi, std::vector<Expr>& out) {
  static constexpr uint32_t kLengthEnds[] = {0x7F, 0x7FF, 0xFFFF, kMaxCodePoint};
  for (uint32_t end : kLengthEnds) {
    if (lo > hi) return;
    if (lo > end) continue;
    uint32_t piece_hi = std::min(hi, end);
    // Split around the surrogate block, which lies inside the 3-byte range.
    if (lo <= kSurrogateHi && piece_hi >= kSurrogateLo) {
      if (lo < kSurrogateLo) out.push_back(utf8_range(b, lo, kSurrogateLo - 1));
      if (piece_hi > kSurrogateHi) out.push_back(utf8_range(b, kSurrogateHi + 1, piece_hi));
    } else {
      out.push_back(utf8_range(b, lo, piece_hi));
    }
    lo = piece_hi + 1;
  }
}

}  // namespace

CodePointSet CodePointSet::all() { return of(0, kMaxCodePoint); }

void CodePointSet::add(uint32_t lo, uint32_t hi) {
  hi = std::min(hi, kMaxCodePoint);
  if (lo > hi) return;
  // Ranges added in ascending order (building a set from atoms or a table) append in O(1);
  // anything else sorts and merges.
  if (ranges_.empty() || lo > ranges_.back().second + 1) {
    ranges_.emplace_back(lo, hi);
    return;
  }
  if (lo >= ranges_.back().first) {
    ranges_.back().second = std::max(ranges_.back().second, hi);
    return;
  }
  ranges_.emplace_back(lo, hi);
  normalize();
}

void CodePointSet::add(const CodePointSet& other) {
  if (other.ranges_.empty()) return;
  if (ranges_.empty() || other.ranges_.front().first > ranges_.back().second + 1) {
    ranges_.insert(ranges_.end(), other.ranges_.begin(), other.ranges_.end());  // after ours
    return;
  }
  // Both sorted: merge in linear time (a union built atom by atom stays linear per atom).
  std::vector<std::pair<uint32_t, uint32_t>> both;
  both.reserve(ranges_.size() + other.ranges_.size());
  std::merge(ranges_.begin(), ranges_.end(), other.ranges_.begin(), other.ranges_.end(),
             std::back_inserter(both));
  ranges_.clear();
  for (auto r : both) {
    if (!ranges_.empty() && r.first <= ranges_.back().second + 1) {
      ranges_.back().second = std::max(ranges_.back().second, r.second);
    } else {
      ranges_.push_back(r);
    }
  }
}

void CodePointSet::add(const std::vector<std::pair<uint32_t, uint32_t>>& ranges) {
  for (auto [lo, hi] : ranges) {
    if (lo <= std::min(hi, kMaxCodePoint)) ranges_.emplace_back(lo, std::min(hi, kMaxCodePoint));
  }
  normalize();
}

CodePointSet CodePointSet::intersect(const CodePointSet& other) const {
  CodePointSet either = complement();
  either.add(other.complement());
  return either.complement();
}

void CodePointSet::normalize() {
  std::sort(ranges_.begin(), ranges_.end());
  std::vector<std::pair<uint32_t, uint32_t>> merged;
  for (auto r : ranges_) {
    if (!merged.empty() && r.first <= merged.back().second + 1) {
      merged.back().second = std::max(merged.back().second, r.second);
    } else {
      merged.push_back(r);
    }
  }
  ranges_ = std::move(merged);
}

CodePointSet CodePointSet::complement() const {
  CodePointSet out;
  uint32_t next = 0;
  for (auto [lo, hi] : ranges_) {
    if (lo > next) out.ranges_.emplace_back(next, lo - 1);
    next = hi + 1;
  }
  if (next <= kMaxCodePoint) out.ranges_.emplace_back(next, kMaxCodePoint);
  return out;
}

bool CodePointSet::contains(uint32_t cp) const {
  for (auto [lo, hi] : ranges_) {
    if (cp >= lo && cp <= hi) return true;
  }
  return false;
}

std::string encode_code_point(uint32_t cp, CharEncoding encoding) {
  if (encoding == CharEncoding::kUtf8 || !json_needs_escape(cp)) return utf8(cp);
  switch (cp) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\b': return "\\b";
    case '\f': return "\\f";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default: {
      const char* hex = "0123456789abcdef";
      return std::string("\\u00") + hex[cp >> 4] + hex[cp & 15];
    }
  }
}

namespace {

// The strings[first, last) (sorted, distinct, sharing their first `depth` bytes) from byte
// `depth` on, left-factored: one option per distinct next byte, and the bytes that end a
// string with nothing after them merged into one terminal.
Expr literal_trie(GrammarBuilder& b, const std::vector<std::string>& strings, size_t first,
                  size_t last, size_t depth) {
  std::vector<Expr> options;
  ByteSet ends;
  size_t i = first;
  if (i < last && strings[i].size() == depth) {  // sorted: the string that ends here is first
    options.push_back(b.empty());
    ++i;
  }
  while (i < last) {
    const auto byte = static_cast<uint8_t>(strings[i][depth]);
    size_t j = i;
    while (j < last && static_cast<uint8_t>(strings[j][depth]) == byte) ++j;
    if (j == i + 1 && strings[i].size() == depth + 1) {
      ends.set(byte);
    } else {
      options.push_back(b.seq({b.byte_range(byte, byte), literal_trie(b, strings, i, j, depth + 1)}));
    }
    i = j;
  }
  if (!ends.empty()) options.insert(options.begin(), b.bytes(ends));
  return options.size() == 1 ? options[0] : b.alt(std::move(options));
}

}  // namespace

Expr encode_char_class(GrammarBuilder& b, const CodePointSet& set, CharEncoding encoding) {
  std::vector<Expr> options;
  ByteSet ascii;  // single-byte encodings collapse into one terminal
  // JSON escapes share their first bytes (`\`, `\u00`): as a trie, one Earley item stands for
  // all of them until they differ, where one literal per escape would be 40 items in every
  // state inside a string.
  std::vector<std::string> escapes;
  for (auto [lo, hi] : set.ranges()) {
    for (uint32_t cp = lo; cp <= std::min(hi, uint32_t{0x7F}); ++cp) {
      if (encoding == CharEncoding::kJsonString && json_needs_escape(cp)) {
        escapes.push_back(encode_code_point(cp, encoding));
      } else {
        ascii.set(static_cast<uint8_t>(cp));
      }
    }
    if (hi >= 0x80) append_utf8_ranges(b, std::max(lo, uint32_t{0x80}), hi, options);
  }
  if (!escapes.empty()) {
    std::sort(escapes.begin(), escapes.end());
    options.insert(options.begin(), literal_trie(b, escapes, 0, escapes.size(), 0));
  }
  if (!ascii.empty()) options.insert(options.begin(), b.bytes(ascii));
  return b.alt(std::move(options));
}

Expr lexicographic_range(GrammarBuilder& b, std::string_view lo, std::string_view hi,
                         uint8_t digit_min, uint8_t digit_max) {
  AFM_CHECK(lo.size() == hi.size() && !lo.empty());
  const uint8_t l0 = static_cast<uint8_t>(lo[0]), h0 = static_cast<uint8_t>(hi[0]);
  if (l0 > h0) return b.nothing();
  if (lo.size() == 1) return b.byte_range(l0, h0);
  const std::string_view lo_rest = lo.substr(1), hi_rest = hi.substr(1);
  if (l0 == h0) {
    return b.seq({b.byte_range(l0, l0), lexicographic_range(b, lo_rest, hi_rest, digit_min,
                                                            digit_max)});
  }
  const std::string all_min(lo_rest.size(), static_cast<char>(digit_min));
  const std::string all_max(lo_rest.size(), static_cast<char>(digit_max));
  const Expr any_rest =
      b.repeat(b.byte_range(digit_min, digit_max), static_cast<uint32_t>(lo_rest.size()),
               static_cast<uint32_t>(lo_rest.size()));
  std::vector<Expr> options;
  uint8_t mid_lo = l0, mid_hi = h0;
  if (lo_rest != all_min) {  // first digit equal to lo's: the rest must stay >= lo_rest
    options.push_back(b.seq({b.byte_range(l0, l0),
                             lexicographic_range(b, lo_rest, all_max, digit_min, digit_max)}));
    ++mid_lo;
  }
  if (hi_rest != all_max) {
    options.push_back(b.seq({b.byte_range(h0, h0),
                             lexicographic_range(b, all_min, hi_rest, digit_min, digit_max)}));
    --mid_hi;
  }
  if (mid_lo <= mid_hi) options.push_back(b.seq({b.byte_range(mid_lo, mid_hi), any_rest}));
  return b.alt(std::move(options));
}

}  // namespace afm::guided
