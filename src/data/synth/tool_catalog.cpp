#include "data/synth/tool_catalog.h"

#include <algorithm>
#include <array>

#include "base/error.h"
#include "data/synth/text_forms.h"

namespace afm::data::synth {
namespace {

struct Ratio {
  std::string_view from, to;
  int64_t num, den;
};

// Exact definitions: 1 mi = 1.609344 km, 1 lb = 0.45359237 kg, 1 ft = 0.3048 m,
// 1 US gal = 3.785411784 l.
constexpr std::array<Ratio, 8> kRatios = {{
    {"km", "mi", 1000000, 1609344},
    {"mi", "km", 1609344, 1000000},
    {"kg", "lb", 100000000, 45359237},
    {"lb", "kg", 45359237, 100000000},
    {"m", "ft", 10000, 3048},
    {"ft", "m", 3048, 10000},
    {"l", "gal", 1000000000, 3785411784},
    {"gal", "l", 3785411784, 1000000000},
}};

Json string_enum(std::initializer_list<std::string_view> values) {
  Json e = Json::array();
  for (std::string_view v : values) e.push_back(v);
  return Json{{"type", "string"}, {"enum", e}};
}

Json unit_enum() {
  Json e = Json::array();
  for (const Unit& u : units()) e.push_back(u.code);
  return Json{{"type", "string"}, {"enum", e}};
}

Json iso_date_property() { return Json{{"type", "string"}, {"description", "date as YYYY-MM-DD"}}; }

}  // namespace

std::string_view tool_name(ToolId id) {
  switch (id) {
    case ToolId::kWeather:
      return "get_weather";
    case ToolId::kCalculator:
      return "calculate";
    case ToolId::kConvertUnits:
      return "convert_units";
    case ToolId::kCalendar:
      return "get_calendar_events";
    case ToolId::kExchangeRate:
      return "get_exchange_rate";
  }
  AFM_CHECK(false && "unknown tool");
  return {};
}

Json tool_description(ToolId id) {
  const std::string_view name = tool_name(id);
  switch (id) {
    case ToolId::kWeather:
      return tool_spec(name, "Current weather conditions for a city.",
                       object_schema({{"city", {{"type", "string"}}},
                                      {"unit", string_enum({"celsius", "fahrenheit"})}},
                                     {"unit"}));
    case ToolId::kCalculator:
      return tool_spec(name, "Evaluates an arithmetic expression with + - * / and parentheses.",
                       object_schema({{"expression", {{"type", "string"}}}}));
    case ToolId::kConvertUnits:
      return tool_spec(name,
                       "Converts a quantity between units of length, mass, volume or "
                       "temperature.",
                       object_schema({{"value", {{"type", "number"}}},
                                      {"from_unit", unit_enum()},
                                      {"to_unit", unit_enum()}}));
    case ToolId::kCalendar:
      return tool_spec(name, "Lists the events in the user's calendar on a date.",
                       object_schema({{"date", iso_date_property()}}));
    case ToolId::kExchangeRate:
      return tool_spec(name, "The current exchange rate from one currency to another.",
                       object_schema({{"base", string_enum({"USD", "EUR", "GBP"})},
                                      {"quote", string_enum({"USD", "EUR", "GBP"})}}));
  }
  AFM_CHECK(false && "unknown tool");
  return {};
}

Json tools_offered(SynthRng& rng, ToolId needed) {
  const std::vector<size_t> order = rng.distinct(kToolCount, kToolCount);
  const int extra = static_cast<int>(rng.below(3));
  Json tools = Json::array();
  int added = 0;
  for (size_t i : order) {
    const auto id = static_cast<ToolId>(i);
    if (id == needed) {
      tools.push_back(tool_description(id));
    } else if (added < extra) {
      tools.push_back(tool_description(id));
      ++added;
    }
  }
  return tools;
}

const std::vector<Unit>& units() {
  static const std::vector<Unit> kUnits = {{"km", "kilometers"},
                                           {"mi", "miles"},
                                           {"kg", "kilograms"},
                                           {"lb", "pounds"},
                                           {"m", "meters"},
                                           {"ft", "feet"},
                                           {"l", "liters"},
                                           {"gal", "US gallons"},
                                           {"celsius", "degrees Celsius"},
                                           {"fahrenheit", "degrees Fahrenheit"}};
  return kUnits;
}

bool unit_ratio(std::string_view from, std::string_view to, int64_t& num, int64_t& den) {
  for (const Ratio& r : kRatios) {
    if (r.from == from && r.to == to) {
      num = r.num, den = r.den;
      return true;
    }
  }
  return false;
}

int64_t convert_hundredths(int64_t value, std::string_view from, std::string_view to) {
  if (from == "celsius" && to == "fahrenheit") return scale_rounded(value, 9, 5) + 3200;
  if (from == "fahrenheit" && to == "celsius") {
    AFM_CHECK(value >= 3200);
    return scale_rounded(value - 3200, 5, 9);
  }
  int64_t num = 1, den = 1;
  AFM_CHECK(unit_ratio(from, to, num, den));
  return scale_rounded(value, num, den);
}

}  // namespace afm::data::synth
