// Exact grammars for JSON numbers under bounds: decimal values, integer ranges, multiples.
//
// Values are exact decimals parsed from JSON number text (no binary floating point): a bound
// written 1.1 means 1.1. Outputs are canonical JSON numbers: no leading zeros, no "-0", and
// when bounds apply, fixed notation (no exponent). Every string these grammars accept is a
// number within the bounds (sound); within fixed notation they accept all of them (complete).
// Thread safety: plain values and free functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "guided/grammar.h"

namespace afm::guided {

struct Decimal {
  bool negative = false;      // never set for zero
  std::string int_digits = "0";  // no leading zeros
  std::string frac_digits;    // no trailing zeros
  bool is_integer() const { return frac_digits.empty(); }
  bool is_zero() const { return int_digits == "0" && frac_digits.empty(); }
};

// Parses JSON number text ("-12.5e3"); nullopt if malformed or the exponent is beyond 4096.
std::optional<Decimal> parse_decimal(std::string_view text);
int compare(const Decimal& a, const Decimal& b);
std::string to_string(const Decimal& d);

struct Bound {
  Decimal value;
  bool inclusive = true;
};

// Integers v with lo <= v <= hi (bounds are integers, either may be absent).
Expr integer_range(GrammarBuilder& b, const std::optional<Decimal>& lo,
                   const std::optional<Decimal>& hi);
// The smallest integer satisfying the bound from below / largest from above.
Decimal integer_floor_bound(const Bound& lower);    // ceil of lower (+1 when exclusive & integral)
Decimal integer_ceiling_bound(const Bound& upper);  // floor of upper (-1 when exclusive & integral)

// Numbers (fixed notation, optional fraction) within the bounds.
Expr decimal_range(GrammarBuilder& b, const std::optional<Bound>& lo,
                   const std::optional<Bound>& hi);

// Every number once, in its one text: fixed notation, no trailing fraction zeros, no "-0"
// (0, -1.5, 12.25; not 1.0, 1e2 or -0). For uniqueItems, which compares texts.
Expr canonical_number(GrammarBuilder& b);

// Any JSON number / any canonical JSON integer.
Expr json_number(GrammarBuilder& b);
Expr json_integer(GrammarBuilder& b);

// Integers that are multiples of k (1 <= k <= 10000), any sign.
Expr integer_multiple(GrammarBuilder& b, uint32_t k);

// Numbers v (fixed notation; integers only when `integer`) within the bounds that are
// multiples of `multiple` = p * 10^-s (p <= 10000, s <= 9): v * 10^s is an integer divisible
// by p, so a fraction has at most s digits. Exact (sound and complete within fixed notation).
// nullopt when p, s or the bounds (over 40 digits) are out of range, or the automaton needs
// more than max_states states (number_multiples.cpp).
std::optional<Expr> multiple_range(GrammarBuilder& b, const Decimal& multiple, bool integer,
                                   const std::optional<Bound>& lo, const std::optional<Bound>& hi,
                                   size_t max_states);

}  // namespace afm::guided
