// Command-line options more than one afm-train command shares.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "train/trainer.h"

namespace afm::train {

// The options every training run shares: device, threads, bf16, logs, resume, stopping.
void add_run_options(CLI::App* cmd, RunOptions& run);

// "a,b,,c" -> {"a", "b", "c"}: a comma-separated option value (empty items dropped).
std::vector<std::string> split_commas(const std::string& s);

}  // namespace afm::train
