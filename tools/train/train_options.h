// Command-line options more than one afm-train command shares.
#pragma once

#include <CLI/CLI.hpp>

#include "train/trainer.h"

namespace afm::train {

// The options every training run shares: device, threads, bf16, logs, resume, stopping.
void add_run_options(CLI::App* cmd, RunOptions& run);

}  // namespace afm::train
