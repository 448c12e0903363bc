// The tools the synthetic tool-use transcripts call: their descriptions for the system tools
// list and the deterministic fake results they return.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "data/synth/chat_format.h"
#include "data/synth/synth_rng.h"

namespace afm::data::synth {

enum class ToolId { kWeather, kCalculator, kConvertUnits, kCalendar, kExchangeRate };
inline constexpr int kToolCount = 5;

std::string_view tool_name(ToolId id);
Json tool_description(ToolId id);  // {"name", "description", "parameters": schema}

// The system tools list: the needed tool plus up to two others, in a random order.
Json tools_offered(SynthRng& rng, ToolId needed);

// A unit the converter knows, its spoken plural and its conversions.
struct Unit {
  std::string_view code, plural;
};
const std::vector<Unit>& units();
// Conversion factor from -> to as a fraction num / den, or false when there is none. The
// temperature units are handled by convert_hundredths.
bool unit_ratio(std::string_view from, std::string_view to, int64_t& num, int64_t& den);
// value (hundredths) converted and rounded to hundredths; value >= 0.
int64_t convert_hundredths(int64_t value, std::string_view from, std::string_view to);

}  // namespace afm::data::synth
