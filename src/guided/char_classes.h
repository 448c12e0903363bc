// Character classes for the guided compilers: sets of Unicode code points, and their
// encoding into grammar expressions over bytes.
//
// Two encodings:
//  - kUtf8: the code point's UTF-8 bytes.
//  - kJsonString: the code point as it appears inside a JSON string literal in canonical
//    form (the form nlohmann::json::dump() writes): '"' and '\\' escaped with a backslash,
//    \b \f \n \r \t for those controls, other controls below U+0020 as \u00xx (lowercase hex),
//    everything else (DEL and non-ASCII included) as raw UTF-8. One code point, one encoding,
//    so lengths in code points and regexes carry over exactly.
// Surrogates (U+D800..U+DFFF) are never encoded: they are not characters in UTF-8 text.
// Thread safety: plain values and free functions; no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "guided/grammar.h"

namespace afm::guided {

inline constexpr uint32_t kMaxCodePoint = 0x10FFFF;

enum class CharEncoding { kUtf8, kJsonString };

class CodePointSet {
 public:
  CodePointSet() = default;
  static CodePointSet all();  // every scalar value (surrogates excluded)
  static CodePointSet of(uint32_t lo, uint32_t hi) {
    CodePointSet s;
    s.add(lo, hi);
    return s;
  }
  void add(uint32_t lo, uint32_t hi);  // inclusive; hi clamped to kMaxCodePoint
  void add(const CodePointSet& other);
  // Many ranges at once (inclusive, any order, may overlap): one normalisation.
  void add(const std::vector<std::pair<uint32_t, uint32_t>>& ranges);
  CodePointSet intersect(const CodePointSet& other) const;
  CodePointSet complement() const;     // relative to all()
  bool contains(uint32_t cp) const;
  bool empty() const { return ranges_.empty(); }
  // Sorted, disjoint, non-adjacent inclusive ranges.
  const std::vector<std::pair<uint32_t, uint32_t>>& ranges() const { return ranges_; }

 private:
  void normalize();
  std::vector<std::pair<uint32_t, uint32_t>> ranges_;
};

// One code point from `set`, as bytes in the given encoding (nothing() when the set is empty).
Expr encode_char_class(GrammarBuilder& b, const CodePointSet& set, CharEncoding encoding);

// The bytes of one code point in the given encoding.
std::string encode_code_point(uint32_t cp, CharEncoding encoding);

// Strings s with lo <= s <= hi (byte-wise lexicographic), all of length lo.size() ==
// hi.size(), where every position after the first ranges over [digit_min, digit_max] and
// lo/hi use only such digits after their first byte. Used for decimal ranges and UTF-8.
Expr lexicographic_range(GrammarBuilder& b, std::string_view lo, std::string_view hi,
                         uint8_t digit_min, uint8_t digit_max);

}  // namespace afm::guided
