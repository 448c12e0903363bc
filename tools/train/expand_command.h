// `afm-train expand`: a deeper model that computes what its base computes (block expansion,
// train/block_expansion.h), the start of further training at a larger size.
#pragma once

#include <CLI/CLI.hpp>

namespace afm::train {

void add_expand_command(CLI::App& app);

}  // namespace afm::train
