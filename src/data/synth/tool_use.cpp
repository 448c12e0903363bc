// (b) Tool-use transcripts: a request, the call(s), the tool turn(s) and the final answer.
#include <algorithm>
#include <array>
#include <cstdio>
#include <initializer_list>
#include <iterator>

#include "data/synth/chat_format.h"
#include "data/synth/lexicon.h"
#include "data/synth/request_grammar.h"
#include "data/synth/tasks.h"
#include "data/synth/text_forms.h"
#include "data/synth/tool_catalog.h"

namespace afm::data::synth {
namespace {

// The parts of a transcript a scenario fills in.
struct Exchange {
  ToolId tool;
  std::string request;
  Json calls = Json::array();   // [{"name", "arguments"}]
  std::vector<Json> results{};  // one per call, in call order
  std::string answer{};
};

Json call(ToolId id, Json arguments) {
  return Json{{"name", tool_name(id)}, {"arguments", std::move(arguments)}};
}

constexpr std::array<std::string_view, 6> kConditions = {
    "sunny", "partly cloudy", "overcast", "light rain", "windy", "light snow"};

struct Weather {
  std::string city;
  int celsius;
  std::string conditions;
};

Weather draw_weather(SynthRng& rng) {
  Weather w;
  w.city = draw_city_name(rng);
  w.celsius = static_cast<int>(rng.range(-8, 34));
  w.conditions = rng.pick(Words(kConditions));
  if (w.celsius <= 0 && w.conditions == "light rain") w.conditions = "light snow";
  if (w.celsius > 3 && w.conditions == "light snow") w.conditions = "light rain";
  return w;
}

int in_unit(int celsius, bool fahrenheit) {
  return fahrenheit ? (celsius * 9 + (celsius >= 0 ? 2 : -2)) / 5 + 32 : celsius;
}

std::string degrees(int value, bool fahrenheit) {
  return std::to_string(value) + (fahrenheit ? " °F" : " °C");
}

Json weather_result(const Weather& w, bool fahrenheit) {
  return Json{{"city", w.city},
              {"temperature", in_unit(w.celsius, fahrenheit)},
              {"unit", fahrenheit ? "fahrenheit" : "celsius"},
              {"conditions", w.conditions}};
}

// With the broad-variety knob, the request is rephrased as one of `more` (one draw for the
// knob, one for the pick; no draw when the knob is 0).
void rephrase(SynthRng& rng, std::string& request, std::initializer_list<std::string> more) {
  if (!rng.broad_variety()) return;
  request = std::data(more)[rng.below(more.size())];
}

Exchange weather_one(SynthRng& rng) {
  const Weather w = draw_weather(rng);
  const bool fahrenheit = rng.percent(30);
  const std::array<std::string, 4> asks = {
      "What's the weather like in " + w.city + " right now?",
      "Do I need a jacket in " + w.city + " today?",
      "How warm is it in " + w.city + "?",
      "Tell me the current conditions in " + w.city + ".",
  };
  Exchange e{ToolId::kWeather, asks[rng.below(asks.size())]};
  rephrase(rng, e.request,
           {"Is it cold in " + w.city + " today?",
            "What's it like outside in " + w.city + "?",
            "Weather for " + w.city + ", please.",
            "Any idea how the weather is in " + w.city + "?",
            "Tell me the temperature in " + w.city + ".",
            "I'll be in " + w.city + " later. What are the conditions there?"});
  if (fahrenheit) e.request += " Please use Fahrenheit.";
  Json args = {{"city", w.city}};
  if (fahrenheit) args["unit"] = "fahrenheit";
  if (rng.wide_phrasing()) {
    const bool celsius_said = !fahrenheit && rng.percent(25);
    e.request = weather_request(rng, w.city, fahrenheit     ? "fahrenheit"
                                             : celsius_said ? "celsius"
                                                            : "");
    if (celsius_said) args["unit"] = "celsius";
  }
  e.calls.push_back(call(ToolId::kWeather, args));
  e.results.push_back(weather_result(w, fahrenheit));
  e.answer = "It is currently " + degrees(in_unit(w.celsius, fahrenheit), fahrenheit) + " in " +
             w.city + ", " + w.conditions + ".";
  if (e.request.find("jacket") != std::string::npos) {
    e.answer += w.celsius < 15 ? " Yes, take a jacket." : " You probably won't need a jacket.";
  }
  return e;
}

Exchange weather_two(SynthRng& rng) {
  Weather a = draw_weather(rng);
  Weather b = draw_weather(rng);
  if (a.city == b.city) b.city = a.city == "Oslo" ? "Lisbon" : "Oslo";
  Exchange e{ToolId::kWeather, "Compare the weather in " + a.city + " and " + b.city + "."};
  for (const Weather* w : {&a, &b}) {
    e.calls.push_back(call(ToolId::kWeather, Json{{"city", w->city}}));
    e.results.push_back(weather_result(*w, false));
  }
  e.answer = a.city + ": " + degrees(a.celsius, false) + ", " + a.conditions + ". " + b.city +
             ": " + degrees(b.celsius, false) + ", " + b.conditions + ". ";
  const int diff = a.celsius - b.celsius;
  if (diff == 0) {
    e.answer += "Both cities have the same temperature.";
  } else {
    const std::string& warmer = diff > 0 ? a.city : b.city;
    e.answer += warmer + " is warmer by " + std::to_string(diff > 0 ? diff : -diff) +
                (diff == 1 || diff == -1 ? " degree." : " degrees.");
  }
  return e;
}

// A calculation asked in the phrase grammar: one of the four operations, the numbers in the
// text with or without thousands separators, in the expression without.
Exchange composed_calculation(SynthRng& rng) {
  const auto op = static_cast<ArithmeticOp>(rng.below(4));
  int64_t x = rng.range(2, 9999), y = rng.range(2, 999);
  if (op == ArithmeticOp::kDivide) x = y * rng.range(2, 99);  // exact division
  static constexpr std::array<std::string_view, 4> kSigns = {" + ", " - ", " * ", " / "};
  static constexpr std::array<int64_t (*)(int64_t, int64_t), 4> kApply = {
      [](int64_t p, int64_t q) { return p + q; }, [](int64_t p, int64_t q) { return p - q; },
      [](int64_t p, int64_t q) { return p * q; }, [](int64_t p, int64_t q) { return p / q; }};
  const size_t k = static_cast<size_t>(op);
  const std::string expr = std::to_string(x) + std::string(kSigns[k]) + std::to_string(y);
  const bool commas = rng.percent(50);
  const auto spell = [&](int64_t v) { return commas ? with_commas(v) : std::to_string(v); };
  Exchange e{ToolId::kCalculator, arithmetic_request(rng, op, spell(x), spell(y))};
  e.calls.push_back(call(ToolId::kCalculator, Json{{"expression", expr}}));
  e.results.push_back(Json{{"result", kApply[k](x, y)}});
  e.answer = "The result is " + with_commas(kApply[k](x, y)) + ".";
  return e;
}

Exchange calculator(SynthRng& rng) {
  if (rng.wide_phrasing()) return composed_calculation(rng);
  const int64_t a = rng.range(2, 9999);
  const int64_t b = rng.range(2, 999);
  const int64_t c = rng.range(2, 99);
  const int form = static_cast<int>(rng.below(5));
  std::string expr, spoken;
  int64_t result = 0;
  const std::string as = std::to_string(a), bs = std::to_string(b), cs = std::to_string(c);
  switch (form) {
    case 0:
      expr = as + " + " + bs, spoken = with_commas(a) + " plus " + bs, result = a + b;
      break;
    case 1:
      expr = as + " - " + bs, spoken = with_commas(a) + " minus " + bs, result = a - b;
      break;
    case 2:
      expr = as + " * " + bs, spoken = with_commas(a) + " times " + bs, result = a * b;
      break;
    case 3:
      expr = "(" + as + " + " + bs + ") * " + cs;
      spoken = "the sum of " + with_commas(a) + " and " + bs + ", multiplied by " + cs;
      result = (a + b) * c;
      break;
    default:
      expr = std::to_string(b * c) + " / " + cs;  // exact division
      spoken = with_commas(b * c) + " divided by " + cs;
      result = b;
      break;
  }
  const std::array<std::string, 3> asks = {"What is " + spoken + "?",
                                           "Can you calculate " + spoken + " for me?",
                                           "I need " + spoken + ", please."};
  Exchange e{ToolId::kCalculator, asks[rng.below(asks.size())]};
  rephrase(rng, e.request,
           {"Compute " + spoken + ".",         "Crunch " + spoken + " for me.",
            "How much is " + spoken + "?",     "Please evaluate " + expr + ".",
            "What does " + expr + " come to?", "Figure out " + spoken + " for me.",
            "Use the calculator: " + expr});
  e.calls.push_back(call(ToolId::kCalculator, Json{{"expression", expr}}));
  e.results.push_back(Json{{"result", result}});
  e.answer = "The result is " + with_commas(result) + ".";
  return e;
}

Exchange unit_conversion(SynthRng& rng) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 10> kPairs = {
      {{"km", "mi"},
       {"mi", "km"},
       {"kg", "lb"},
       {"lb", "kg"},
       {"m", "ft"},
       {"ft", "m"},
       {"l", "gal"},
       {"gal", "l"},
       {"celsius", "fahrenheit"},
       {"fahrenheit", "celsius"}}};
  const auto& [from, to] = kPairs[rng.below(kPairs.size())];
  const bool whole = rng.percent(60);
  int64_t value = whole ? rng.range(1, 500) * 100 : rng.range(10, 5000) * 10;
  if (from == "fahrenheit") value = rng.range(33, 110) * 100;
  if (from == "celsius") value = rng.range(0, 45) * 100;
  const int64_t converted = convert_hundredths(value, from, to);
  std::string_view from_name, to_name;
  for (const Unit& u : units()) {
    if (u.code == from) from_name = u.plural;
    if (u.code == to) to_name = u.plural;
  }
  const std::string quantity = decimal(value, true) + " " + std::string(from_name);
  const std::array<std::string, 3> asks = {
      "How many " + std::string(to_name) + " is " + quantity + "?",
      "Convert " + quantity + " to " + std::string(to_name) + ".",
      "What is " + quantity + " in " + std::string(to_name) + "?"};
  Exchange e{ToolId::kConvertUnits, asks[rng.below(asks.size())]};
  const std::string to_plural(to_name);
  rephrase(rng, e.request,
           {"Turn " + quantity + " into " + to_plural + ".",
            "Put " + quantity + " in " + to_plural + " for me.",
            "I have " + quantity + ". How much is that in " + to_plural + "?",
            "Change " + quantity + " to " + to_plural + ", please."});
  if (rng.wide_phrasing()) e.request = conversion_request(rng, decimal(value, true), from, to);
  e.calls.push_back(call(ToolId::kConvertUnits,
                         Json{{"value", to_number(value)}, {"from_unit", from}, {"to_unit", to}}));
  e.results.push_back(Json{{"value", to_number(converted)}, {"unit", to}});
  e.answer = quantity + " is about " + decimal(converted, true) + " " + std::string(to_name) + ".";
  return e;
}

Exchange calendar(SynthRng& rng) {
  static constexpr std::array<std::string_view, 10> kTitles = {
      "Team standup", "Dentist appointment", "Project review",
      "Yoga class",   "Call with the bank",  "Lunch with a client",
      "Piano lesson", "Budget meeting",      "School pickup",
      "Book club"};
  const Date d = random_date(rng, 2024, 2026);
  const int count = static_cast<int>(rng.below(4));
  const std::vector<size_t> titles = rng.distinct(kTitles.size(), static_cast<size_t>(count));
  const std::vector<size_t> hours = rng.distinct(12, static_cast<size_t>(count));
  std::vector<std::pair<int, std::string>> events;  // (minute of day, title)
  for (int i = 0; i < count; ++i) {
    const int minute = static_cast<int>(rng.below(4)) * 15;
    events.emplace_back(static_cast<int>(7 + hours[i]) * 60 + minute, kTitles[titles[i]]);
  }
  std::sort(events.begin(), events.end());
  Json list = Json::array();
  std::string said;
  for (size_t i = 0; i < events.size(); ++i) {
    char time[16];
    std::snprintf(time, sizeof(time), "%02d:%02d", events[i].first / 60, events[i].first % 60);
    list.push_back(Json{{"time", time}, {"title", events[i].second}});
    said += (i == 0                   ? ""
             : i + 1 == events.size() ? " and "
                                      : ", ") +
            events[i].second + " at " + time;
  }
  const std::string day = month_day(d) + ", " + std::to_string(d.year);
  Exchange e{ToolId::kCalendar,
             rng.percent(50) ? "What do I have on " + day + "?" : "Am I free on " + day + "?"};
  rephrase(rng, e.request,
           {"Check my calendar for " + day + ".", "Is anything scheduled on " + day + "?",
            "Show my schedule for " + day + ".", "Do I have meetings on " + day + "?"});
  if (rng.wide_phrasing()) e.request = calendar_request(rng, d);
  e.calls.push_back(call(ToolId::kCalendar, Json{{"date", iso_date(d)}}));
  e.results.push_back(Json{{"date", iso_date(d)}, {"events", list}});
  e.answer = events.empty() ? "Your calendar is free on " + day + "."
                            : "On " + day + " you have " + said + ".";
  return e;
}

Exchange exchange_rate(SynthRng& rng) {
  const std::vector<size_t> pair = rng.distinct(std::size(kCurrencies), 2);
  const Currency& base = kCurrencies[pair[0]];
  const Currency& quote = kCurrencies[pair[1]];
  // Typical rates in ten-thousandths (row: base, column: quote; USD, EUR, GBP), +-4%.
  static constexpr int64_t kTypical[3][3] = {
      {10000, 9200, 7900}, {10870, 10000, 8600}, {12660, 11630, 10000}};
  const int64_t rate = kTypical[pair[0]][pair[1]] * rng.range(96, 104) / 100;
  const int64_t amount = rng.range(1, 200) * 25;
  const int64_t converted = scale_rounded(amount * 100, rate, 10000);
  Exchange e{ToolId::kExchangeRate, "How much is " + prose_money(amount * 100, base, 1) + " in " +
                                        std::string(quote.name_plural) + "?"};
  const std::string money = prose_money(amount * 100, base, 1);
  const std::string quotes(quote.name_plural);
  rephrase(rng, e.request,
           {"Convert " + money + " to " + quotes + ".",
            "What would " + money + " be in " + quotes + "?",
            "If I change " + money + ", how many " + quotes + " do I get?"});
  if (rng.wide_phrasing()) e.request = exchange_request(rng, amount * 100, base, quote);
  e.calls.push_back(call(ToolId::kExchangeRate, Json{{"base", base.code}, {"quote", quote.code}}));
  e.results.push_back(Json{
      {"base", base.code}, {"quote", quote.code}, {"rate", static_cast<double>(rate) / 10000.0}});
  e.answer = prose_money(amount * 100, base, 1) + " is about " + prose_money(converted, quote, 1) +
             " at the current rate.";
  return e;
}

constexpr std::array<std::string_view, 3> kToolUseSystem = {
    "You are a helpful assistant. Use the tools when they help answer the user.",
    "You are an assistant with access to tools. Call a tool when you need live data or exact "
    "arithmetic, then answer briefly.",
    "Answer the user's question. You may call the listed tools.",
};

// A greeting before the request or thanks after it, as people write (broad-variety knob).
std::string framed(SynthRng& rng, std::string request) {
  constexpr std::array<std::string_view, 8> kBefore = {"",
                                                       "Hi! ",
                                                       "Hello. ",
                                                       "Hey, quick question. ",
                                                       "Good morning! ",
                                                       "Sorry to bother you. ",
                                                       "I have a question. ",
                                                       "Could you help me? "};
  constexpr std::array<std::string_view, 5> kAfter = {"", "", " Thanks!", " Thank you.",
                                                      " Thanks in advance."};
  return std::string(rng.pick(Words(kBefore))) + request + std::string(rng.pick(Words(kAfter)));
}

}  // namespace

Messages make_tool_use(SynthRng& rng) {
  using Maker = Exchange (*)(SynthRng&);
  static constexpr std::array<Maker, 6> kMakers = {weather_one,     weather_two, calculator,
                                                   unit_conversion, calendar,    exchange_rate};
  Exchange e = kMakers[rng.below(kMakers.size())](rng);
  if (rng.broad_variety()) e.request = framed(rng, e.request);
  const std::string_view instructions = rng.pick(Words(kToolUseSystem));
  const Json tools = tools_offered(rng, e.tool);
  Messages m = {{"system", system_with_tools(instructions, tools)},
                {"user", e.request},
                {"assistant", tool_calls(e.calls)}};
  for (const Json& r : e.results) m.push_back({"tool", compact(r)});
  m.push_back({"assistant", e.answer});
  return m;
}

}  // namespace afm::data::synth
