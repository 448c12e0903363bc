// `afm data preferences --input conversations.jsonl --out pairs.jsonl [--seed N] [--json]`:
// preference pairs for `afm train reward` made from conversations (rl/preference_pair.h:
// chosen = the reference reply, rejected = the same reply with one task mistake graded by the
// rule reward, or another conversation's reply for free answers). Written atomically.
#pragma once

#include <CLI/CLI.hpp>

namespace afm::cli {

void add_data_preferences(CLI::App& data);

}  // namespace afm::cli
