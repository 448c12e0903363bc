// (c) Arithmetic word problems with a worked line and "The answer is N."
#include <array>
#include <cstdio>

#include "data/synth/lexicon.h"
#include "data/synth/request_grammar.h"
#include "data/synth/tasks.h"
#include "data/synth/text_forms.h"

namespace afm::data::synth {
namespace {

struct Problem {
  std::string question, working, answer;
};

std::string n(int64_t v) { return with_commas(v); }

Problem addition(SynthRng& rng) {
  const std::string name(rng.pick(first_names()));
  const std::string friend_name(rng.pick(first_names()));
  const std::string items(rng.pick(countable_items()));
  const int64_t a = rng.range(3, 250);
  const int64_t more = rng.range(2, 150);
  return {name + " has " + n(a) + " " + items + ". " + friend_name + " gives " + name + " " +
              n(more) + " more. How many " + items + " does " + name + " have now?",
          n(a) + " + " + n(more) + " = " + n(a + more), n(a + more)};
}

Problem subtraction(SynthRng& rng) {
  static constexpr std::array<std::string_view, 4> kSellers = {"A baker", "A farmer", "A bookshop",
                                                               "A street vendor"};
  static constexpr std::array<std::string_view, 4> kGoods = {"loaves of bread", "melons", "novels",
                                                             "sandwiches"};
  const size_t who = rng.below(kSellers.size());
  const int64_t made = rng.range(20, 500);
  const int64_t sold = rng.range(1, made - 1);
  return {std::string(kSellers[who]) + " had " + n(made) + " " + std::string(kGoods[who]) +
              " and sold " + n(sold) + " of them. How many are left?",
          n(made) + " - " + n(sold) + " = " + n(made - sold), n(made - sold)};
}

Problem multiplication(SynthRng& rng) {
  const std::string items(rng.pick(countable_items()));
  const int64_t boxes = rng.range(2, 40);
  const int64_t each = rng.range(2, 48);
  return {"There are " + n(boxes) + " boxes with " + n(each) + " " + items +
              " in each box. How many " + items + " are there in total?",
          n(boxes) + " × " + n(each) + " = " + n(boxes * each), n(boxes * each)};
}

Problem division(SynthRng& rng) {
  const std::string name(rng.pick(first_names()));
  const std::string items(rng.pick(countable_items()));
  const int64_t friends = rng.range(2, 12);
  const int64_t each = rng.range(2, 30);
  return {name + " shares " + n(friends * each) + " " + items + " equally among " + n(friends) +
              " friends. How many " + items + " does each friend get?",
          n(friends * each) + " ÷ " + n(friends) + " = " + n(each), n(each)};
}

Problem change(SynthRng& rng) {
  const std::string name(rng.pick(first_names()));
  const std::string product(rng.pick(shop_products()));
  const int64_t qty = rng.range(2, 6);
  const int64_t price = rng.range(1, 40) * 25;  // cents, multiples of 25
  const int64_t total = qty * price;
  const int64_t bill = (total / 2000 + 1) * 2000;  // the next $20 note above the total
  const Currency& usd = kCurrencies[0];
  return {name + " buys " + n(qty) + " of the " + product + " at " + prose_money(price, usd, 0) +
              " each and pays with " + prose_money(bill, usd, 0) + ". How much change does " +
              name + " get?",
          n(qty) + " × " + prose_money(price, usd, 0) + " = " + prose_money(total, usd, 0) +
              ", and " + prose_money(bill, usd, 0) + " - " + prose_money(total, usd, 0) + " = " +
              prose_money(bill - total, usd, 0),
          prose_money(bill - total, usd, 0)};
}

Problem discount(SynthRng& rng) {
  const std::string product(rng.pick(shop_products()));
  const int64_t dollars = rng.range(10, 400);
  const int64_t percent = rng.range(1, 15) * 5;
  const int64_t off = dollars * percent;  // cents: dollars * 100 * percent / 100
  const Currency& usd = kCurrencies[0];
  const std::string was = prose_money(dollars * 100, usd, 0);
  return {"The " + product + " costs " + was + ". It is on sale for " + n(percent) +
              "% off. What is the sale price?",
          n(percent) + "% of " + was + " is " + prose_money(off, usd, 0) + ", and " + was + " - " +
              prose_money(off, usd, 0) + " = " + prose_money(dollars * 100 - off, usd, 0),
          prose_money(dollars * 100 - off, usd, 0)};
}

std::string clock(int64_t minutes) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "%02d:%02d", static_cast<int>(minutes / 60 % 24),
                static_cast<int>(minutes % 60));
  return buf;
}

Problem arrival(SynthRng& rng) {
  const int64_t start = rng.range(5 * 12, 21 * 12) * 5;  // 05:00 to 21:00 in 5-minute steps
  const int64_t trip = rng.range(15, 300);
  const std::string from(rng.pick(cities()).name);
  return {
      "A train leaves " + from + " at " + clock(start) + " and the trip takes " + n(trip) +
          " minutes. At what time does it arrive?",
      clock(start) + " + " + n(trip / 60) + " h " + n(trip % 60) + " min = " + clock(start + trip),
      clock(start + trip)};
}

Problem distance(SynthRng& rng) {
  const int64_t speed = rng.range(4, 24) * 5;
  const int64_t hours = rng.range(2, 9);
  return {"A car travels at " + n(speed) + " km/h for " + n(hours) + " hours. How far does it go?",
          n(speed) + " km/h × " + n(hours) + " h = " + n(speed * hours) + " km",
          n(speed * hours) + " km"};
}

Problem reading(SynthRng& rng) {
  const std::string name(rng.pick(first_names()));
  const int64_t per_day = rng.range(5, 60);
  const int64_t days = rng.range(2, 14);
  const int64_t last = rng.range(1, per_day);
  const int64_t total = per_day * days + last;
  return {name + " reads " + n(per_day) + " pages a day for " + n(days) + " days and then " +
              n(last) + " pages on the last day. How many pages does " + name + " read in total?",
          n(per_day) + " × " + n(days) + " + " + n(last) + " = " + n(total), n(total)};
}

// Bare two-digit sums and differences, worked column by column: the tokenizer splits numbers
// into digits, so a small model can learn the digit facts and the carry / borrow, units first,
// before it writes the result (it cannot hold a 90 x 90 table of answers).
constexpr std::array<std::string_view, 4> kSumAsks = {
    "What is {a} + {b}?", "Find the sum of {a} and {b}.", "How much is {a} plus {b}?",
    "{a} + {b} = ?"};
constexpr std::array<std::string_view, 4> kDifferenceAsks = {
    "What is {a} - {b}?", "Find the difference between {a} and {b}.",
    "How much is {a} minus {b}?", "Calculate {a} - {b}."};

std::string fill(std::string_view pattern, int64_t a, int64_t b) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern.compare(i, 3, "{a}") == 0) out += std::to_string(a), i += 2;
    else if (pattern.compare(i, 3, "{b}") == 0) out += std::to_string(b), i += 2;
    else out += pattern[i];
  }
  return out;
}

std::string d(int64_t v) { return std::to_string(v); }

// The column steps of a + b, then the result line.
std::string sum_columns(int64_t a, int64_t b) {
  const int64_t units = a % 10 + b % 10, carry = units / 10;
  std::string work = d(a % 10) + " + " + d(b % 10) + " = " + d(units);
  work += carry ? ", write " + d(units % 10) + " and carry 1.\n" : ".\n";
  work += d(a / 10) + " + " + d(b / 10) + (carry ? " + 1" : "") + " = " +
          d(a / 10 + b / 10 + carry) + ".\n";
  return work + d(a) + " + " + d(b) + " = " + d(a + b);
}

// The column steps of a - b (a >= b), then the result line.
std::string difference_columns(int64_t a, int64_t b) {
  const bool borrow = a % 10 < b % 10;
  std::string work = borrow ? d(a % 10) + " is less than " + d(b % 10) + ", so borrow: " +
                                  d(a % 10 + 10) + " - " + d(b % 10) + " = " +
                                  d(a % 10 + 10 - b % 10) + ".\n" +
                                  d(a / 10) + " - 1 - " + d(b / 10) + " = " +
                                  d(a / 10 - 1 - b / 10) + ".\n"
                            : d(a % 10) + " - " + d(b % 10) + " = " + d(a % 10 - b % 10) +
                                  ".\n" + d(a / 10) + " - " + d(b / 10) + " = " +
                                  d(a / 10 - b / 10) + ".\n";
  return work + d(a) + " - " + d(b) + " = " + d(a - b);
}

Problem bare_sum(SynthRng& rng) {
  const int64_t a = rng.range(10, 99), b = rng.range(10, 99);
  return {fill(rng.pick(Words(kSumAsks)), a, b), sum_columns(a, b), d(a + b)};
}

Problem bare_difference(SynthRng& rng) {
  int64_t a = rng.range(10, 99), b = rng.range(10, 99);
  if (a < b) std::swap(a, b);
  return {fill(rng.pick(Words(kDifferenceAsks)), a, b), difference_columns(a, b), d(a - b)};
}

// Wider phrasings for the restated items: {a} and {b} may appear in either order ("deduct {b}
// from {a}"), and the stories name a person {n} and things {i}. The answer always restates
// "{a} + {b}" or "{a} - {b}" first.
constexpr std::array<std::string_view, 16> kRestatedSumAsks = {
    "What is the total of {a} and {b}?",
    "Increase {a} by {b}.",
    "What number is {b} more than {a}?",
    "{a} and {b} make how many altogether?",
    "Sum {a} and {b}, please.",
    "Tell me {a} plus {b}.",
    "What's {b} added to {a}?",
    "Put {b} on top of {a}: what do you have?",
    "Give the sum: {a} + {b}",
    "{a} + {b}",
    "Please work out {a} + {b} for me.",
    "{n} counts {a} {i} on Monday and {b} on Tuesday. How many {i} in all?",
    "{n} has {a} {i} and buys {b} more. How many {i} does {n} have?",
    "There are {a} {i} in one box and {b} in another. How many {i} are there together?",
    "{n} walked {a} km last week and {b} km this week. How far is that altogether?",
    "A class collects {a} {i}, then {b} more. What is the total?"};
constexpr std::array<std::string_view, 16> kRestatedDifferenceAsks = {
    "Deduct {b} from {a}.",
    "What is {b} less than {a}?",
    "Reduce {a} by {b}.",
    "How much is left when {b} is removed from {a}?",
    "From {a}, subtract {b}.",
    "{a} take away {b} is what?",
    "What is the difference of {a} and {b}?",
    "Decrease {a} by {b}, please.",
    "Tell me {a} minus {b}.",
    "{a} - {b}",
    "By how much is {a} bigger than {b}?",
    "{n} had {a} {i} and gave {b} away. How many {i} are left?",
    "There were {a} {i} on the shelf; {b} were sold. How many remain?",
    "{n} needs {a} {i} and already has {b}. How many more does {n} need?",
    "A tank held {a} litres and {b} litres leaked out. How much is left?",
    "{n} scored {a} points and lost {b} of them. What is the score now?"};

std::string fill_story(std::string_view pattern, int64_t a, int64_t b, std::string_view name,
                       std::string_view items) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern.compare(i, 3, "{n}") == 0) out += name, i += 2;
    else if (pattern.compare(i, 3, "{i}") == 0) out += items, i += 2;
    else out += pattern[i];
  }
  return fill(out, a, b);
}

Problem restated(SynthRng& rng, bool sum) {
  int64_t a = rng.range(10, 99), b = rng.range(10, 99);
  if (!sum && a < b) std::swap(a, b);
  const std::string_view pattern =
      rng.pick(Words(sum ? kRestatedSumAsks : kRestatedDifferenceAsks));
  const std::string_view name = rng.pick(first_names());
  const std::string_view items = rng.pick(countable_items());
  const std::string expression = d(a) + (sum ? " + " : " - ") + d(b);
  return {fill_story(pattern, a, b, name, items),
          expression + ".\n" + (sum ? sum_columns(a, b) : difference_columns(a, b)),
          d(sum ? a + b : a - b)};
}

// A sum or difference asked in the phrase grammar (request_grammar.h), answered like the
// restated items: the expression first, then its columns.
Problem composed(SynthRng& rng, bool sum) {
  int64_t a = rng.range(10, 99), b = rng.range(10, 99);
  if (!sum && a < b) std::swap(a, b);
  const std::string question = arithmetic_request(
      rng, sum ? ArithmeticOp::kAdd : ArithmeticOp::kSubtract, d(a), d(b));
  const std::string expression = d(a) + (sum ? " + " : " - ") + d(b);
  return {question, expression + ".\n" + (sum ? sum_columns(a, b) : difference_columns(a, b)),
          d(sum ? a + b : a - b)};
}

Problem bare_item(SynthRng& rng) {
  const bool sum = rng.below(2) == 0;
  if (rng.wide_phrasing()) return composed(rng, sum);
  if (rng.restated_arithmetic()) return restated(rng, sum);
  return sum ? bare_sum(rng) : bare_difference(rng);
}

constexpr std::array<std::string_view, 3> kArithmeticSystem = {
    "You are a patient math tutor. Show the calculation, then give the answer.",
    "Solve the word problem. Keep the working short.",
    "You are a helpful assistant that is good at arithmetic.",
};

}  // namespace

Messages make_arithmetic(SynthRng& rng) {
  using Maker = Problem (*)(SynthRng&);
  static constexpr std::array<Maker, 9> kMakers = {addition, subtraction, multiplication,
                                                   division, change,      discount,
                                                   arrival,  distance,    reading};
  const int bare = rng.bare_arithmetic_percent();  // 0: no draw, the pretraining stream
  const Problem p = bare > 0 && rng.percent(bare)
                        ? bare_item(rng)
                        : kMakers[rng.below(kMakers.size())](rng);
  const std::string_view instructions = rng.pick(Words(kArithmeticSystem));
  return {{"system", std::string(instructions)},
          {"user", p.question},
          {"assistant", p.working + ".\nThe answer is " + p.answer + "."}};
}

}  // namespace afm::data::synth
