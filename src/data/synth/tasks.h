// The synthetic task generators. Each draws everything from the SynthRng it is given, so an
// example is a pure function of the generator's seed.
//
// Contract: every JSON answer an assistant turn holds is valid JSON matching the schema or
// tool list shown in the same example (tests/data_pipeline/synth_test.cpp checks this).
#pragma once

#include <string>
#include <vector>

#include "data/synth/synth_rng.h"
#include "framework/chat_template.h"

namespace afm::data::synth {

using Messages = std::vector<ChatMessage>;

// (a) A sentence or two about a person, event, payment, trip or order; the user turn carries
// the response-format block, the assistant answers with the compact JSON object.
Messages make_extraction(SynthRng& rng);
// (b) A request answered through tools (weather, calculator, unit conversion, calendar,
// exchange rates): system tools list, tool call(s), tool turn(s), final answer.
Messages make_tool_use(SynthRng& rng);
// (c) A short arithmetic word problem, a worked line and "The answer is N."
Messages make_arithmetic(SynthRng& rng);
// (d) Sentiment or topic classification with the label set in the prompt; the answer is the
// label, or {"label": ...} when a response format is given.
Messages make_classification(SynthRng& rng);
// (e) Small talk (greetings, thanks, farewells, questions about the assistant) answered in
// text, with or without tools on offer; only when asked for (`--tasks chat`).
Messages make_small_talk(SynthRng& rng);

}  // namespace afm::data::synth
