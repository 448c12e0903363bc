// The phrase grammar of request_grammar.h: parts lists, then one composer per request kind.
#include "data/synth/request_grammar.h"

#include <array>
#include <utility>

#include "data/synth/lexicon.h"

namespace afm::data::synth {
namespace {

// Openers and closers around a request (each list starts with "" so most requests have none).
constexpr std::array<std::string_view, 12> kOpeners = {
    "", "", "", "", "Hey! ", "Hi there. ", "Quick one: ", "OK, next: ", "Hello! ", "Right. ",
    "Another question. ", "Excuse me. "};
constexpr std::array<std::string_view, 8> kClosers = {
    "", "", "", "", " Thanks.", " Cheers!", " Grateful for the help.", " Thanks a lot!"};

// Every opener ends a sentence, so the request keeps its capital (it may start with a name).
std::string around(SynthRng& rng, const std::string& request) {
  const std::string_view opener = rng.pick(Words(kOpeners));
  return std::string(opener) + request + std::string(rng.pick(Words(kClosers)));
}

// ---- arithmetic ----------------------------------------------------------------------------
// Noun phrases naming the result ({m} first operand, {n} second) and verb phrases asking for
// the operation. Both orders of the operands occur in each list, so the order in the
// sentence never tells which operand is which; the words do.
struct OpPhrases {
  Words nouns, verbs;
};

constexpr std::array<std::string_view, 11> kAddNouns = {
    "{m} plus {n}",        "{m} + {n}",           "the sum of {m} and {n}",
    "{n} added to {m}",    "{m} increased by {n}", "the total of {m} and {n}",
    "{m} and {n} combined", "{n} more than {m}",   "{m} with {n} added on",
    "{m} and {n} added up", "the sum {m} + {n}"};
constexpr std::array<std::string_view, 8> kAddVerbs = {
    "add {m} and {n}",         "add {n} onto {m}",        "sum {m} and {n}",
    "total up {m} and {n}",    "increase {m} by {n}",     "put {m} and {n} together",
    "combine {m} with {n}",    "add up {m} and {n}"};
constexpr std::array<std::string_view, 11> kSubtractNouns = {
    "{m} minus {n}",                  "{m} - {n}",
    "{n} subtracted from {m}",        "{m} take away {n}",
    "the difference between {m} and {n}", "{m} reduced by {n}",
    "{n} less than {m}",              "{m} less {n}",
    "{m} decreased by {n}",           "what is left of {m} after {n} is removed",
    "{m} with {n} taken off"};
constexpr std::array<std::string_view, 9> kSubtractVerbs = {
    "subtract {n} from {m}", "take away {n} from {m}", "deduct {n} from {m}",
    "remove {n} from {m}",   "reduce {m} by {n}",      "decrease {m} by {n}",
    "knock {n} off {m}",     "take {n} off {m}",       "find {m} minus {n}"};
constexpr std::array<std::string_view, 8> kMultiplyNouns = {
    "{m} times {n}",          "{m} × {n}",          "{m} * {n}",
    "{m} multiplied by {n}",  "the product of {m} and {n}", "{n} lots of {m}",
    "{m} groups of {n}",      "{n} times {m}"};
constexpr std::array<std::string_view, 5> kMultiplyVerbs = {
    "multiply {m} and {n}", "multiply {n} and {m} together", "times {m} by {n}",
    "find the product of {m} and {n}", "work out {m} lots of {n}"};
constexpr std::array<std::string_view, 7> kDivideNouns = {
    "{m} divided by {n}",         "{m} / {n}",
    "{m} ÷ {n}",                  "{m} over {n}",
    "the quotient of {m} and {n}", "{m} shared equally between {n}",
    "how many times {n} goes into {m}"};
constexpr std::array<std::string_view, 5> kDivideVerbs = {
    "divide {m} by {n}", "share {m} equally among {n}", "cut {m} into {n} equal shares",
    "find {m} divided by {n}", "work out {m} over {n}"};

OpPhrases phrases(ArithmeticOp op) {
  switch (op) {
    case ArithmeticOp::kAdd: return {Words(kAddNouns), Words(kAddVerbs)};
    case ArithmeticOp::kSubtract: return {Words(kSubtractNouns), Words(kSubtractVerbs)};
    case ArithmeticOp::kMultiply: return {Words(kMultiplyNouns), Words(kMultiplyVerbs)};
    case ArithmeticOp::kDivide: break;
  }
  return {Words(kDivideNouns), Words(kDivideVerbs)};
}

// Frames: {x} is the phrase.
constexpr std::array<std::string_view, 16> kNounFrames = {
    "What's {x}?",          "How much is {x}?",        "Tell me {x}.",
    "I need {x}.",          "Can you give me {x}?",    "Please work out {x}.",
    "Figure out {x} for me.", "What does {x} come to?", "{x} is how much?",
    "Find {x}, please.",    "What number is {x}?",     "Help me with {x}.",
    "Could you tell me {x}?", "I'd like to know {x}.", "What would {x} be?",
    "Do you know {x}?"};
constexpr std::array<std::string_view, 12> kVerbFrames = {
    "Please {x}.",                    "Can you {x}?",
    "Could you {x} for me?",          "{x}, please.",
    "I'd like you to {x}.",           "{x} and tell me the result.",
    "Help me {x}.",                   "What is the result if I {x}?",
    "I want to {x}. What's the answer?", "Would you {x}?",
    "Let's {x}. What do we get?",     "Try to {x}."};

}  // namespace

std::string capitalised(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

std::string fill_slots(std::string_view pattern, std::initializer_list<PhraseSlot> slots) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    bool replaced = false;
    if (pattern[i] == '{') {
      for (const auto& [name, value] : slots) {
        if (pattern.compare(i + 1, name.size(), name) == 0 &&
            i + 1 + name.size() < pattern.size() && pattern[i + 1 + name.size()] == '}') {
          out += value;
          i += name.size() + 1;
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out += pattern[i];
  }
  return out;
}

std::string arithmetic_request(SynthRng& rng, ArithmeticOp op, const std::string& first,
                               const std::string& second) {
  const OpPhrases p = phrases(op);
  const bool noun = rng.percent(55);
  const std::string phrase =
      fill_slots(rng.pick(noun ? p.nouns : p.verbs), {{"m", first}, {"n", second}});
  const std::string_view frame = rng.pick(noun ? Words(kNounFrames) : Words(kVerbFrames));
  return around(rng, capitalised(fill_slots(frame, {{"x", phrase}})));
}

// ---- weather ---------------------------------------------------------------------------------

namespace {
constexpr std::array<std::string_view, 18> kWeatherFrames = {
    "How's the weather in {c}?",           "Is it sunny in {c} today?",
    "Will I need an umbrella in {c}?",     "{c} weather, please.",
    "Current temperature for {c}?",        "What are conditions like in {c} now?",
    "Look up the weather in {c}.",         "I'm visiting {c} tomorrow. How is the weather there now?",
    "Is it warm in {c}?",                  "How hot is it in {c} right now?",
    "Give me {c}'s weather.",              "What's the temperature over in {c}?",
    "Should I wear a coat in {c} today?",  "My sister lives in {c}. What's the weather there?",
    "Is {c} chilly just now?",          "Find out the weather for {c}.",
    "What is it doing outside in {c}?",    "Weather report for {c}, please."};
constexpr std::array<std::string_view, 5> kFahrenheitSaid = {
    " In Fahrenheit, please.", " Use degrees Fahrenheit.", " (Fahrenheit)",
    " Give me Fahrenheit.", " I prefer °F."};
constexpr std::array<std::string_view, 5> kCelsiusSaid = {
    " In Celsius, please.", " Use degrees Celsius.", " (Celsius)", " Give me Celsius.",
    " I prefer °C."};
}  // namespace

std::string weather_request(SynthRng& rng, const std::string& city, std::string_view unit) {
  std::string request = fill_slots(rng.pick(Words(kWeatherFrames)), {{"c", city}});
  if (unit == "fahrenheit") request += rng.pick(Words(kFahrenheitSaid));
  if (unit == "celsius") request += rng.pick(Words(kCelsiusSaid));
  return around(rng, request);
}

// ---- calendar --------------------------------------------------------------------------------

std::string spelled_date(SynthRng& rng, const Date& date) {
  const std::string month(month_name(date.month));
  // "Mar" and "Mar." but "May", "June", "July" in full: short names are not abbreviated.
  const bool short_name = month.size() <= 4;
  const std::string abbreviation = short_name ? month : month.substr(0, 3);
  const std::string dotted = short_name ? month : abbreviation + ".";
  const std::string day = std::to_string(date.day), year = std::to_string(date.year);
  switch (rng.below(9)) {
    case 0: return prose_date(date, static_cast<int>(rng.below(kDateStyles)));
    case 1: return abbreviation + " " + day + ", " + year;
    case 2: return day + " " + abbreviation + " " + year;
    case 3: return dotted + " " + day + ", " + year;
    case 4: return month + " " + ordinal(date.day) + ", " + year;
    case 5: return ordinal(date.day) + " " + month + " " + year;
    case 6: return month + " the " + ordinal(date.day) + " " + year;
    case 7: return iso_date(date);
    default: return day + " " + month + ", " + year;
  }
}

namespace {
constexpr std::array<std::string_view, 14> kCalendarFrames = {
    "What's on my calendar for {d}?",   "Anything booked on {d}?",
    "Do I have plans on {d}?",          "List my events for {d}.",
    "What meetings do I have on {d}?",  "Am I busy on {d}?",
    "Pull up my schedule for {d}.",     "Look at {d} in my calendar.",
    "{d}: what's planned?",             "What's happening on {d}?",
    "Can you check {d} for meetings?",  "Have I got anything on {d}?",
    "Tell me my events on {d}.",        "Is my day free on {d}?"};
}  // namespace

std::string calendar_request(SynthRng& rng, const Date& date) {
  return around(rng, capitalised(fill_slots(rng.pick(Words(kCalendarFrames)),
                                      {{"d", spelled_date(rng, date)}})));
}

// ---- exchange rates --------------------------------------------------------------------------

namespace {
// Ways to name each currency of kCurrencies (same order).
constexpr std::array<std::array<std::string_view, 4>, 3> kCurrencyNames = {{
    {"dollars", "US dollars", "USD", "American dollars"},
    {"euros", "EUR", "euros", "EUR"},
    {"pounds", "British pounds", "GBP", "pounds sterling"},
}};

std::string_view currency_name(SynthRng& rng, const Currency& c) {
  const size_t i = c.code == "USD" ? 0 : c.code == "EUR" ? 1 : 2;
  return kCurrencyNames[i][rng.below(4)];
}

// {m}: the amount with its currency, {q}: the quote currency, {b}: the base currency.
constexpr std::array<std::string_view, 14> kRateFrames = {
    "I have {m}. How many {q} is that?",     "Change {m} into {q} for me.",
    "What's {m} worth in {q}?",              "{m} to {q}, please.",
    "What is the {b} to {q} rate?",          "Exchange rate from {b} to {q}?",
    "How many {q} do I get for {m}?",        "I want to swap {m} for {q}.",
    "Turn {m} into {q}.",                    "My {m} would be how much in {q}?",
    "I'm travelling with {m} and need {q}.", "What is one {b1} in {q}?",
    "Price of {b} in {q} today?",            "Sell {m} for {q}: what rate?"};
}  // namespace

std::string exchange_request(SynthRng& rng, int64_t hundredths, const Currency& base,
                             const Currency& quote) {
  const std::string base_name(currency_name(rng, base));
  const std::string quote_name(currency_name(rng, quote));
  const std::string amount = rng.percent(50) ? prose_money(hundredths, base, static_cast<int>(rng.below(kMoneyStyles)))
                                       : with_commas(hundredths / 100) + " " + base_name;
  const std::string one = base.code == "USD" ? "dollar" : base.code == "EUR" ? "euro" : "pound";
  return around(rng, capitalised(fill_slots(rng.pick(Words(kRateFrames)), {{"m", amount},
                                                                     {"q", quote_name},
                                                                     {"b", base_name},
                                                                     {"b1", one}})));
}

// ---- unit conversion -------------------------------------------------------------------------

namespace {
struct UnitNames {
  std::string_view code;
  std::array<std::string_view, 3> names;
};
constexpr std::array<UnitNames, 10> kUnitNames = {{
    {"km", {"kilometers", "kilometres", "km"}},
    {"mi", {"miles", "miles", "mi"}},
    {"kg", {"kilograms", "kilos", "kg"}},
    {"lb", {"pounds", "lbs", "lb"}},
    {"m", {"meters", "metres", "m"}},
    {"ft", {"feet", "feet", "ft"}},
    {"l", {"liters", "litres", "L"}},
    {"gal", {"gallons", "gallons", "gal"}},
    {"celsius", {"degrees Celsius", "Celsius", "°C"}},
    {"fahrenheit", {"degrees Fahrenheit", "Fahrenheit", "°F"}},
}};

std::string unit_name(SynthRng& rng, std::string_view code) {
  for (const UnitNames& u : kUnitNames) {
    if (u.code == code) return std::string(u.names[rng.below(u.names.size())]);
  }
  return std::string(code);
}

// {v} value, {f} from unit, {t} to unit.
constexpr std::array<std::string_view, 12> kConversionFrames = {
    "{v} {f} in {t}?",                  "How many {t} are in {v} {f}?",
    "What's {v} {f} in {t}?",           "Convert {v} {f} into {t}.",
    "{v} {f} to {t}, please.",          "I've got {v} {f}; how many {t} is that?",
    "Change {v} {f} into {t} for me.",  "{v} {f} is how many {t}?",
    "Could you express {v} {f} in {t}?", "My recipe says {v} {f}. What is that in {t}?",
    "The sign says {v} {f}. How much is that in {t}?", "Switch {v} {f} over to {t}."};
}  // namespace

std::string conversion_request(SynthRng& rng, const std::string& value, std::string_view from,
                               std::string_view to) {
  const std::string f = unit_name(rng, from), t = unit_name(rng, to);
  return around(rng, capitalised(fill_slots(rng.pick(Words(kConversionFrames)),
                                      {{"v", value}, {"f", f}, {"t", t}})));
}

}  // namespace afm::data::synth
