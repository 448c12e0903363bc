// Synthetic examples as OpenAI chat-completions conversations, one JSON object per line: the
// input of `afm train sft` (train/sft_data.h). `afm data synth --format jsonl` writes them.
//
// The messages keep the text the afm template renders: the tool list stays in the system
// turn's text and the response format in the user turn's, so the SFT reader renders a line to
// exactly the document `--format text` writes. Tool-call blocks become structured
// `tool_calls` (ids "call_1", ... in order) and tool turns name their call by `tool_call_id`,
// as the API requires. Each line also carries {"metadata": {"task": NAME}}.
#pragma once

#include <nlohmann/json.hpp>

#include "data/synth/synth.h"

namespace afm::data::synth {

nlohmann::ordered_json to_openai_conversation(const Example& example);

}  // namespace afm::data::synth
