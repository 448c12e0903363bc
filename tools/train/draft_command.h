// `afm-train draft`: distils a speculative-decoding draft model from a base GGUF
// (train/draft.h, docs/training.md "Draft models").
#pragma once

#include <CLI/CLI.hpp>

namespace afm::train {

void add_draft_command(CLI::App& app);

}  // namespace afm::train
