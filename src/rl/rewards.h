// Rule rewards for reinforcement learning on the tasks afm's models are trained for (report
// section 5.2; docs/rl.md): each scores one sampled reply against the truth the task's
// generator knows, in [0, 1] (the length penalty aside). They never throw on a bad reply: an
// unparsable or wrongly shaped reply scores 0.
//
// Thread safety: reentrant.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/chat_template.h"

namespace afm::rl {

using Json = nlohmann::ordered_json;

// 1 when `reply` is exactly one JSON value (whitespace around it allowed) that `schema`
// accepts, as the guided engine's grammar for the schema decides (key order aside: keys the
// schema names may come in any order); else 0. Throws afm::Error(kUnsupported / kInvalidArgument)
// for a schema the engine cannot compile: that is the task's fault, not the reply's.
double schema_reward(std::string_view reply, const Json& schema);

struct FieldScore {
  bool parsed = false;    // the reply was one JSON object
  int64_t right = 0;      // fields of the truth with an equal value in the reply
  int64_t total = 0;      // fields of the truth
  double reward() const { return total > 0 ? static_cast<double>(right) / total : 0.0; }
};

// Per-field exact match of an extraction: strings equal byte for byte, numbers numerically
// (2 == 2.0), other values structurally. `truth` must be an object.
FieldScore extraction_score(std::string_view reply, const Json& truth);

// The answer of an arithmetic reply: the text after the last "The answer is" up to the end of
// the line, without a final period; without that phrase, the last number in the reply.
std::optional<std::string> stated_answer(std::string_view reply);

// 1 when the reply's stated answer equals `truth` ("85", "$3.50", "12:40", "240 km"): equal
// as text, or as numbers when both are numbers once '$', ',' and a trailing unit are removed.
double arithmetic_reward(std::string_view reply, std::string_view truth);

// Tool calls against the expected ones, in order: per expected call, half for the right name
// and half times the share of its argument values the call has equal (extraction_score's
// equality); averaged over max(expected, made) calls, so extra calls cost. No call expected
// and none made: 1.
double tool_call_reward(const std::vector<ToolCall>& made, const std::vector<ToolCall>& expected);

// -per_token for each token beyond `budget`, at most -cap (0 within the budget).
double length_penalty(int64_t tokens, int64_t budget, double per_token, double cap);

}  // namespace afm::rl
