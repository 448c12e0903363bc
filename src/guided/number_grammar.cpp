// Digit-level constructions for bounded numbers; see number_grammar.h.
#include "guided/number_grammar.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>

#include "guided/char_classes.h"

namespace afm::guided {

namespace {

std::string strip_leading_zeros(std::string s) {
  size_t i = s.find_first_not_of('0');
  return i == std::string::npos ? "0" : s.substr(i);
}

int compare_magnitude_int(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  return a.compare(b) < 0 ? -1 : a.compare(b) > 0 ? 1 : 0;
}

std::string add_one(std::string s) {
  int i = static_cast<int>(s.size()) - 1;
  while (i >= 0 && s[i] == '9') s[i--] = '0';
  if (i < 0) return "1" + s;
  ++s[i];
  return s;
}

std::string sub_one(std::string s) {  // s > 0
  int i = static_cast<int>(s.size()) - 1;
  while (s[i] == '0') s[i--] = '9';
  --s[i];
  return strip_leading_zeros(s);
}

Decimal make_int(bool negative, std::string mag) {
  Decimal d;
  d.int_digits = strip_leading_zeros(std::move(mag));
  d.negative = negative && d.int_digits != "0";
  return d;
}

Decimal plus_one(const Decimal& v) {  // v integral
  return v.negative ? make_int(true, sub_one(v.int_digits)) : make_int(false, add_one(v.int_digits));
}

Decimal minus_one(const Decimal& v) {
  if (v.negative || v.is_zero()) return make_int(true, add_one(v.int_digits));
  return make_int(false, sub_one(v.int_digits));
}

Expr digits(GrammarBuilder& b) { return b.byte_range('0', '9'); }

// Non-negative integers in [lo, hi] (hi absent: unbounded), canonical digits.
Expr magnitude_int_range(GrammarBuilder& b, const std::string& lo,
                         const std::optional<std::string>& hi) {
  if (hi && compare_magnitude_int(lo, *hi) > 0) return b.nothing();
  std::vector<Expr> options;
  const size_t max_len = hi ? hi->size() : lo.size();
  for (size_t n = lo.size(); n <= max_len; ++n) {
    std::string lo_n = n == lo.size() ? lo : "1" + std::string(n - 1, '0');
    std::string hi_n = hi && n == hi->size() ? *hi : std::string(n, '9');
    options.push_back(lexicographic_range(b, lo_n, hi_n, '0', '9'));
  }
  if (!hi) {
    const auto n = static_cast<uint32_t>(lo.size());
    options.push_back(b.seq({b.byte_range('1', '9'), b.repeat(digits(b), n, kUnbounded)}));
  }
  return b.alt(std::move(options));
}

// Fractions ("" or "." digits) whose value 0.F lies within optional bounds 0.lo / 0.hi.
class FractionBuilder {
 public:
  FractionBuilder(GrammarBuilder& b, std::optional<std::string> lo, bool lo_inc,
                  std::optional<std::string> hi, bool hi_inc)
      : b_(b), lo_(std::move(lo)), hi_(std::move(hi)), lo_inc_(lo_inc), hi_inc_(hi_inc) {}

  Expr build() {
    std::vector<Expr> options;
    if (end_ok(0, lo_.has_value(), hi_.has_value())) options.push_back(b_.empty());
    options.push_back(b_.seq({b_.literal("."), state(0, lo_.has_value(), hi_.has_value(), true)}));
    return b_.alt(std::move(options));
  }

 private:
  size_t lo_len() const { return lo_ ? lo_->size() : 0; }
  size_t hi_len() const { return hi_ ? hi_->size() : 0; }
  int lo_digit(size_t i) const { return i < lo_len() ? (*lo_)[i] - '0' : 0; }
  int hi_digit(size_t i) const { return i < hi_len() ? (*hi_)[i] - '0' : 0; }

  // Ending here means the remaining digits are all zero.
  bool end_ok(size_t i, bool tlo, bool thi) const {
    bool lo_ok = !tlo || (i >= lo_len() && lo_inc_);
    bool hi_ok = !thi || i < hi_len() || hi_inc_;
    return lo_ok && hi_ok;
  }

  // Digits from position i on, still tight against lo (tlo) and/or hi (thi).
  Expr state(size_t i, bool tlo, bool thi, bool need_digit) {
    if (!tlo && !thi) return b_.repeat(digits(b_), need_digit ? 1 : 0, kUnbounded);
    size_t cap = std::max(tlo ? lo_len() : 0, thi ? hi_len() : 0);
    i = std::min(i, cap);  // beyond both bounds' digits the state no longer depends on i
    auto key = std::make_tuple(i, tlo, thi, need_digit);
    if (auto it = memo_.find(key); it != memo_.end()) return b_.ref(it->second);
    RuleId rule = b_.declare("frac");
    memo_[key] = rule;
    std::vector<Expr> options;
    if (!need_digit && end_ok(i, tlo, thi)) options.push_back(b_.empty());
    const int dmin = tlo ? lo_digit(i) : 0, dmax = thi ? hi_digit(i) : 9;
    for (int d = dmin; d <= dmax; ++d) {
      bool ntlo = tlo && d == lo_digit(i), nthi = thi && d == hi_digit(i);
      int e = d;  // group digits that lead to the same next state
      while (e + 1 <= dmax && !(tlo && e + 1 == lo_digit(i)) && !(thi && e + 1 == hi_digit(i)) &&
             !ntlo && !nthi) {
        ++e;
      }
      options.push_back(b_.seq({b_.byte_range('0' + d, '0' + e), state(i + 1, ntlo, nthi, false)}));
      d = e;
    }
    b_.define(rule, b_.alt(std::move(options)));
    return b_.ref(rule);
  }

  GrammarBuilder& b_;
  std::optional<std::string> lo_, hi_;
  bool lo_inc_, hi_inc_;
  std::map<std::tuple<size_t, bool, bool, bool>, RuleId> memo_;
};

Expr fraction_any(GrammarBuilder& b) { return b.optional(b.seq({b.literal("."), b.plus(digits(b))})); }

// Non-negative numbers w with L <(=) w <(=) H; H absent: unbounded.
Expr magnitude_range(GrammarBuilder& b, const Decimal& lo, bool lo_inc,
                     const std::optional<Decimal>& hi, bool hi_inc) {
  if (hi) {
    int c = compare(lo, *hi);
    if (c > 0 || (c == 0 && !(lo_inc && hi_inc))) return b.nothing();
  }
  const std::string& il = lo.int_digits;
  if (hi && hi->int_digits == il) {
    FractionBuilder f(b, lo.frac_digits, lo_inc, hi->frac_digits, hi_inc);
    return b.seq({b.literal(il), f.build()});
  }
  std::vector<Expr> options;
  FractionBuilder low(b, lo.frac_digits, lo_inc, std::nullopt, true);
  options.push_back(b.seq({b.literal(il), low.build()}));
  if (!hi) {
    options.push_back(b.seq({magnitude_int_range(b, add_one(il), std::nullopt), fraction_any(b)}));
    return b.alt(std::move(options));
  }
  const std::string& ih = hi->int_digits;
  if (compare_magnitude_int(add_one(il), sub_one(ih)) <= 0) {
    options.push_back(b.seq({magnitude_int_range(b, add_one(il), sub_one(ih)), fraction_any(b)}));
  }
  FractionBuilder high(b, std::nullopt, true, hi->frac_digits, hi_inc);
  options.push_back(b.seq({b.literal(ih), high.build()}));
  return b.alt(std::move(options));
}

Decimal magnitude(const Decimal& d) {
  Decimal m = d;
  m.negative = false;
  return m;
}

}  // namespace

std::optional<Decimal> parse_decimal(std::string_view text) {
  size_t i = 0;
  bool neg = i < text.size() && text[i] == '-';
  if (neg) ++i;
  std::string int_part, frac_part;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) int_part += text[i++];
  if (int_part.empty()) return std::nullopt;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) frac_part += text[i++];
    if (frac_part.empty()) return std::nullopt;
  }
  long exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool eneg = i < text.size() && text[i] == '-';
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (i >= text.size()) return std::nullopt;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      exponent = std::min(exponent * 10 + (text[i++] - '0'), 100000L);
    }
    if (eneg) exponent = -exponent;
  }
  if (i != text.size() || exponent > 4096 || exponent < -4096) return std::nullopt;
  std::string all = int_part + frac_part;  // value = all * 10^(exponent - frac_len)
  long point = static_cast<long>(int_part.size()) + exponent;
  if (point < 0) {
    all = std::string(static_cast<size_t>(-point), '0') + all;
    point = 0;
  }
  if (point > static_cast<long>(all.size())) all += std::string(point - all.size(), '0');
  Decimal d;
  d.int_digits = strip_leading_zeros(all.substr(0, point));
  d.frac_digits = all.substr(point);
  while (!d.frac_digits.empty() && d.frac_digits.back() == '0') d.frac_digits.pop_back();
  d.negative = neg && !d.is_zero();
  return d;
}

int compare(const Decimal& a, const Decimal& b) {
  if (a.negative != b.negative) return a.negative ? -1 : 1;
  int c = compare_magnitude_int(a.int_digits, b.int_digits);
  if (c == 0) {
    size_t n = std::max(a.frac_digits.size(), b.frac_digits.size());
    std::string fa = a.frac_digits + std::string(n - a.frac_digits.size(), '0');
    std::string fb = b.frac_digits + std::string(n - b.frac_digits.size(), '0');
    c = fa < fb ? -1 : fa > fb ? 1 : 0;
  }
  return a.negative ? -c : c;
}

std::string to_string(const Decimal& d) {
  return (d.negative ? "-" : "") + d.int_digits + (d.is_integer() ? "" : "." + d.frac_digits);
}

Decimal integer_floor_bound(const Bound& lower) {
  const Decimal& v = lower.value;
  if (v.is_integer()) return lower.inclusive ? v : plus_one(v);
  Decimal truncated = make_int(v.negative, v.int_digits);  // toward zero
  return v.negative ? truncated : plus_one(truncated);
}

Decimal integer_ceiling_bound(const Bound& upper) {
  const Decimal& v = upper.value;
  if (v.is_integer()) return upper.inclusive ? v : minus_one(v);
  Decimal truncated = make_int(v.negative, v.int_digits);
  return v.negative ? minus_one(truncated) : truncated;
}

Expr integer_range(GrammarBuilder& b, const std::optional<Decimal>& lo,
                   const std::optional<Decimal>& hi) {
  std::vector<Expr> options;
  if (!hi || !hi->negative) {
    std::string l = lo && !lo->negative ? lo->int_digits : "0";
    std::optional<std::string> h;
    if (hi) h = hi->int_digits;
    options.push_back(magnitude_int_range(b, l, h));
  }
  if (!lo || lo->negative) {
    std::string l = hi && hi->negative ? hi->int_digits : "1";
    std::optional<std::string> h;
    if (lo) h = lo->int_digits;
    options.push_back(b.seq({b.literal("-"), magnitude_int_range(b, l, h)}));
  }
  return b.alt(std::move(options));
}

Expr decimal_range(GrammarBuilder& b, const std::optional<Bound>& lo,
                   const std::optional<Bound>& hi) {
  std::vector<Expr> options;
  if (!hi || !hi->value.negative) {  // values >= 0, written without '-'
    Decimal l = lo && !lo->value.negative ? lo->value : Decimal{};
    bool l_inc = lo && !lo->value.negative ? lo->inclusive : true;
    std::optional<Decimal> h;
    if (hi) h = hi->value;
    options.push_back(magnitude_range(b, l, l_inc, h, hi ? hi->inclusive : true));
  }
  if (!lo || lo->value.negative) {  // values < 0: '-' and a magnitude > 0
    Decimal l = hi && hi->value.negative ? magnitude(hi->value) : Decimal{};
    bool l_inc = hi && hi->value.negative ? hi->inclusive : false;
    std::optional<Decimal> h;
    if (lo) h = magnitude(lo->value);
    options.push_back(b.seq({b.literal("-"), magnitude_range(b, l, l_inc, h, lo ? lo->inclusive : true)}));
  }
  return b.alt(std::move(options));
}

Expr json_integer(GrammarBuilder& b) { return integer_range(b, std::nullopt, std::nullopt); }

Expr json_number(GrammarBuilder& b) {
  Expr exponent = b.seq({b.bytes([] {
                           ByteSet e;
                           e.set('e');
                           e.set('E');
                           return e;
                         }()),
                         b.optional(b.bytes([] {
                           ByteSet s;
                           s.set('+');
                           s.set('-');
                           return s;
                         }())),
                         b.plus(digits(b))});
  Expr int_part = b.alt({b.literal("0"), b.seq({b.byte_range('1', '9'), b.star(digits(b))})});
  return b.seq({b.optional(b.literal("-")), int_part, fraction_any(b), b.optional(exponent)});
}

Expr canonical_number(GrammarBuilder& b) {
  Expr fraction = b.seq({b.literal("."), b.star(digits(b)), b.byte_range('1', '9')});
  Expr positive_int = b.seq({b.byte_range('1', '9'), b.star(digits(b))});
  return b.alt({b.seq({b.literal("0"), b.optional(fraction)}), b.seq({b.literal("-0"), fraction}),
                b.seq({b.optional(b.literal("-")), positive_int, b.optional(fraction)})});
}

Expr integer_multiple(GrammarBuilder& b, uint32_t k) {
  // One rule per remainder r of the digits read so far; accept when r == 0.
  std::vector<RuleId> rem(k);
  for (uint32_t r = 0; r < k; ++r) rem[r] = b.declare("mod" + std::to_string(r));
  for (uint32_t r = 0; r < k; ++r) {
    std::vector<Expr> options;
    if (r == 0) options.push_back(b.empty());
    for (uint32_t d = 0; d <= 9; ++d) {
      options.push_back(b.seq({b.byte_range('0' + d, '0' + d), b.ref(rem[(r * 10 + d) % k])}));
    }
    b.define(rem[r], b.alt(std::move(options)));
  }
  std::vector<Expr> nonzero;  // first digit 1-9, then the automaton
  for (uint32_t d = 1; d <= 9; ++d) {
    nonzero.push_back(b.seq({b.byte_range('0' + d, '0' + d), b.ref(rem[d % k])}));
  }
  Expr positive = b.alt(std::move(nonzero));
  return b.alt({b.literal("0"), positive, b.seq({b.literal("-"), positive})});
}

}  // namespace afm::guided
