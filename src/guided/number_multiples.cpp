// Multiples of a decimal within decimal bounds, as a digit automaton; see number_grammar.h.
//
// A number y >= 0 is read digit by digit (canonical text: no leading zeros, at most
// `frac_max` fraction digits, none of them a trailing zero). The state keeps what decides
// acceptance: the integer digits read (capped where longer is always larger), the comparison
// of the digits read with each bound's digits at the same places, and the remainder mod p of
// y * 10^s read so far (m = p * 10^-s). Negative numbers are -y with the bounds mirrored.
// States that cannot reach acceptance are dropped, so every prefix the grammar allows can
// still be completed.
#include <algorithm>
#include <deque>
#include <map>
#include <tuple>

#include "base/error.h"
#include "guided/number_grammar.h"

namespace afm::guided {

namespace {

enum Cmp : uint8_t { kEq, kLess, kGreater };
enum Phase : uint8_t { kStart, kInt, kZero, kPoint, kFrac };

// A bound on y >= 0 as digits; absent bounds never decide against y.
struct DigitBound {
  bool present = false, inclusive = true;
  std::string int_digits, frac_digits;
};

struct State {
  Phase phase = kStart;
  uint8_t len = 0;                  // integer digits read, capped at `cap`
  Cmp lo = kGreater, hi = kLess;    // int phases: prefix comparison; later: the value's so far
  uint8_t frac = 0;                 // fraction digits read
  bool trailing_zero = false;       // the last fraction digit was 0
  uint32_t rem = 0;                 // (digits read as an integer) mod p
  auto key() const { return std::tuple(phase, len, lo, hi, frac, trailing_zero, rem); }
  bool operator<(const State& o) const { return key() < o.key(); }
};

struct Machine {
  DigitBound lo, hi;
  uint32_t p = 1;
  int s = 0, frac_max = 0;
  uint8_t cap = 0;
  std::vector<uint32_t> pow10;  // 10^i mod p, i = 0 .. s

  // The comparison after reading digit d as integer digit number `len` (0-based).
  static Cmp int_step(Cmp c, const DigitBound& z, int len, char d) {
    if (!z.present) return c;
    if (len >= static_cast<int>(z.int_digits.size())) return kGreater;  // longer: larger
    if (c != kEq) return c;
    return d < z.int_digits[len] ? kLess : d > z.int_digits[len] ? kGreater : kEq;
  }
  // The integer part has ended with `len` digits: the prefix comparison becomes the value's.
  static Cmp int_end(Cmp c, const DigitBound& z, int len) {
    if (!z.present) return c;
    return len < static_cast<int>(z.int_digits.size()) ? kLess : c;
  }
  static Cmp frac_step(Cmp c, const DigitBound& z, int j, char d) {
    if (!z.present || c != kEq) return c;
    const char zd = j < static_cast<int>(z.frac_digits.size()) ? z.frac_digits[j] : '0';
    return d < zd ? kLess : d > zd ? kGreater : kEq;
  }
  // At the end of the number, j fraction digits read: equal so far but the bound has more
  // (nonzero) digits means smaller.
  static Cmp final_cmp(Cmp c, const DigitBound& z, int j) {
    if (!z.present || c != kEq) return c;
    return j < static_cast<int>(z.frac_digits.size()) ? kLess : kEq;
  }

  bool accepts(const State& st) const {
    if (st.phase == kStart || st.phase == kPoint || (st.phase == kFrac && st.trailing_zero)) return false;
    Cmp lo_c = st.lo, hi_c = st.hi;
    if (st.phase != kFrac) {
      lo_c = int_end(lo_c, lo, st.len);
      hi_c = int_end(hi_c, hi, st.len);
    }
    lo_c = final_cmp(lo_c, lo, st.frac);
    hi_c = final_cmp(hi_c, hi, st.frac);
    const bool lo_ok = !lo.present || lo_c == kGreater || (lo_c == kEq && lo.inclusive);
    const bool hi_ok = !hi.present || hi_c == kLess || (hi_c == kEq && hi.inclusive);
    const uint64_t scaled = static_cast<uint64_t>(st.rem) * pow10[s - st.frac] % p;
    return lo_ok && hi_ok && scaled == 0;
  }

  // (byte, next state) for every byte the state may read.
  std::vector<std::pair<char, State>> moves(const State& st) const {
    std::vector<std::pair<char, State>> out;
    auto digit_moves = [&](bool integer_part) {
      for (char d = '0'; d <= '9'; ++d) {
        if (st.phase == kStart && d == '0') {
          State z = st;
          z.phase = kZero;
          z.lo = int_step(st.lo, lo, 0, d);
          z.hi = int_step(st.hi, hi, 0, d);
          z.len = 1;
          out.emplace_back(d, z);
          continue;
        }
        State n = st;
        n.rem = static_cast<uint32_t>((static_cast<uint64_t>(st.rem) * 10 + (d - '0')) % p);
        if (integer_part) {
          n.phase = kInt;
          n.lo = int_step(st.lo, lo, st.len, d);
          n.hi = int_step(st.hi, hi, st.len, d);
          n.len = static_cast<uint8_t>(std::min<int>(st.len + 1, cap));
        } else {
          n.phase = kFrac;
          n.lo = frac_step(st.lo, lo, st.frac, d);
          n.hi = frac_step(st.hi, hi, st.frac, d);
          n.frac = static_cast<uint8_t>(st.frac + 1);
          n.trailing_zero = d == '0';
        }
        out.emplace_back(d, n);
      }
    };
    switch (st.phase) {
      case kStart:
      case kInt:
        digit_moves(true);
        break;
      case kZero:
        break;
      case kPoint:
      case kFrac:
        if (st.frac < frac_max) digit_moves(false);
        break;
    }
    if ((st.phase == kInt || st.phase == kZero) && frac_max > 0) {
      State pt = st;
      pt.phase = kPoint;
      pt.lo = int_end(st.lo, lo, st.len);
      pt.hi = int_end(st.hi, hi, st.len);
      out.emplace_back('.', pt);
    }
    return out;
  }
};

DigitBound digit_bound(const std::optional<Bound>& b) {
  DigitBound z;
  if (!b) return z;
  z.present = true;
  z.inclusive = b->inclusive;
  z.int_digits = b->value.int_digits;
  z.frac_digits = b->value.frac_digits;
  return z;
}

// Canonical y >= 0 (zero included when `with_zero`) in [lo, hi] that are multiples of
// p * 10^-s, with at most frac_max fraction digits; nullopt past max_states.
std::optional<Expr> magnitudes(GrammarBuilder& b, const Machine& m, bool with_zero,
                               size_t max_states) {
  std::map<State, size_t> index;
  std::vector<State> states;
  std::vector<std::vector<std::pair<char, size_t>>> edges;
  std::deque<size_t> todo;
  auto visit = [&](const State& st) {
    auto [it, fresh] = index.emplace(st, states.size());
    if (fresh) {
      states.push_back(st);
      edges.emplace_back();
      todo.push_back(it->second);
    }
    return it->second;
  };
  visit(State{kStart, 0, m.lo.present ? kEq : kGreater, m.hi.present ? kEq : kLess, 0, false, 0});
  while (!todo.empty()) {
    const size_t i = todo.front();
    todo.pop_front();
    if (states.size() > max_states) return std::nullopt;
    for (const auto& [byte, next] : m.moves(states[i])) {
      const size_t j = visit(next);
      edges[i].emplace_back(byte, j);
    }
  }
  // Keep the states from which acceptance is reachable.
  std::vector<std::vector<size_t>> into(states.size());
  for (size_t i = 0; i < states.size(); ++i)
    for (const auto& e : edges[i]) into[e.second].push_back(i);
  // "0" itself ends in the kZero phase; the negative side leaves it out ("-0").
  auto ends_here = [&](size_t i) {
    return m.accepts(states[i]) && (with_zero || states[i].phase != kZero);
  };
  std::vector<bool> live(states.size(), false);
  std::deque<size_t> back;
  for (size_t i = 0; i < states.size(); ++i) {
    if (ends_here(i)) {
      live[i] = true;
      back.push_back(i);
    }
  }
  while (!back.empty()) {
    const size_t i = back.front();
    back.pop_front();
    for (size_t from : into[i]) {
      if (!live[from]) {
        live[from] = true;
        back.push_back(from);
      }
    }
  }
  if (!live[0]) return b.nothing();
  std::vector<RuleId> rule(states.size());
  for (size_t i = 0; i < states.size(); ++i)
    if (live[i]) rule[i] = b.declare("mul" + std::to_string(i));
  for (size_t i = 0; i < states.size(); ++i) {
    if (!live[i]) continue;
    std::vector<Expr> options;
    if (ends_here(i)) options.push_back(b.empty());
    for (const auto& [byte, j] : edges[i]) {
      if (live[j]) options.push_back(b.seq({b.byte_range(byte, byte), b.ref(rule[j])}));
    }
    b.define(rule[i], b.alt(std::move(options)));
  }
  return b.ref(rule[0]);
}

Bound mirrored(const Bound& b) {
  Bound out = b;
  out.value.negative = !b.value.negative && !b.value.is_zero();
  return out;
}

}  // namespace

std::optional<Expr> multiple_range(GrammarBuilder& b, const Decimal& multiple, bool integer,
                                   const std::optional<Bound>& lo, const std::optional<Bound>& hi,
                                   size_t max_states) {
  const auto too_long = [](const std::optional<Bound>& v) {
    return v && v->value.int_digits.size() + v->value.frac_digits.size() > 40;
  };
  if (too_long(lo) || too_long(hi)) return std::nullopt;
  Machine m;
  std::string digits = multiple.int_digits + multiple.frac_digits;
  digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size()));
  if (digits.empty() || digits.size() > 5 || multiple.frac_digits.size() > 9) return std::nullopt;
  m.p = static_cast<uint32_t>(std::stoul(digits));
  if (m.p > 10000) return std::nullopt;
  m.s = static_cast<int>(multiple.frac_digits.size());
  m.frac_max = integer ? 0 : m.s;
  m.pow10.resize(m.s + 1);
  m.pow10[0] = 1 % m.p;
  for (int i = 1; i <= m.s; ++i) m.pow10[i] = m.pow10[i - 1] * 10 % m.p;

  // y >= 0 with lo <= y <= hi; the negative side is y > 0 with -hi <= y <= -lo.
  const auto nonnegative = [](const std::optional<Bound>& v) {
    return !v || !v->value.negative;
  };
  std::vector<Expr> sides;
  const bool positive_side = !hi || nonnegative(hi);
  const bool negative_side = !lo || lo->value.negative;
  auto side = [&](std::optional<Bound> low, std::optional<Bound> high, bool with_zero) {
    Machine side_m = m;
    side_m.lo = digit_bound(low);
    side_m.hi = digit_bound(high);
    side_m.cap = static_cast<uint8_t>(
        std::max(side_m.lo.int_digits.size(), side_m.hi.int_digits.size()) + 1);
    return magnitudes(b, side_m, with_zero, max_states);
  };
  if (positive_side) {
    const std::optional<Bound> low = lo && !lo->value.negative ? lo : std::nullopt;
    auto e = side(low, hi, true);
    if (!e) return std::nullopt;
    sides.push_back(*e);
  }
  if (negative_side) {
    const std::optional<Bound> low = hi && hi->value.negative ? std::optional(mirrored(*hi)) : std::nullopt;
    const std::optional<Bound> high = lo ? std::optional(mirrored(*lo)) : std::nullopt;
    auto e = side(low, high, false);
    if (!e) return std::nullopt;
    sides.push_back(b.seq({b.literal("-"), *e}));
  }
  if (sides.empty()) return b.nothing();
  return b.alt(std::move(sides));
}

}  // namespace afm::guided
