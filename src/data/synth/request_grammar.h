// Requests composed from a small phrase grammar (the wide-phrasing knob, synth_rng.h).
//
// Each request is a core phrase (an operation with its operands in one of several word
// orders, a date or an amount in one of several spellings, a city inside one of several
// clauses) put into one of many frames (question, command, statement of need), with an
// optional opener and closer. Hand-written sentence lists taught the model a few dozen
// sentences by heart; composing parts teaches it what the parts mean ("take 16 away from
// 93" is 93 - 16 whatever the sentence around it), which is what a request in words it has
// never seen needs.
//
// Contract: every function is a pure function of the rng's stream and its arguments, so a
// seed gives the same text on every platform. Numbers are passed in already spelled.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "data/synth/synth_rng.h"
#include "data/synth/text_forms.h"

namespace afm::data::synth {

enum class ArithmeticOp { kAdd, kSubtract, kMultiply, kDivide };

// A request for `first op second` (first is the minuend / dividend), e.g. "Could you take 16
// away from 93 for me?" for (kSubtract, "93", "16").
std::string arithmetic_request(SynthRng& rng, ArithmeticOp op, const std::string& first,
                               const std::string& second);

// A request for the current weather in `city`; unit: "" (none said), "celsius" or
// "fahrenheit" (said in one of several ways).
std::string weather_request(SynthRng& rng, const std::string& city, std::string_view unit);

// A request for the calendar events of one day, the date spelled in one of several ways.
std::string calendar_request(SynthRng& rng, const Date& date);

// A request for the rate to change an amount (hundredths) of `base` into `quote`; currencies
// named by code, symbol or name.
std::string exchange_request(SynthRng& rng, int64_t hundredths, const Currency& base,
                             const Currency& quote);

// A request to convert `value` (already spelled) from one unit code of tool_catalog.h to
// another, the units spelled by name, plural or abbreviation.
std::string conversion_request(SynthRng& rng, const std::string& value, std::string_view from,
                               std::string_view to);

// The pattern with every "{name}" of `slots` replaced by its value (other braces kept).
using PhraseSlot = std::pair<std::string_view, std::string_view>;
std::string fill_slots(std::string_view pattern, std::initializer_list<PhraseSlot> slots);

// The text with its first ASCII letter upper-cased when it is a lower-case letter.
std::string capitalised(std::string s);

// A date in one of the grammar's spellings ("Mar 5", "5th March", "March the 5th", ...).
std::string spelled_date(SynthRng& rng, const Date& date);

}  // namespace afm::data::synth
