// `afm train rloo-generator`: one trajectory generator of an asynchronous RLOO run
// (rl/generator.h, docs/rl.md). `afm-train rloo --generators N` starts these; on other machines
// start them by hand with the broker's address. Runs without libtorch.
#pragma once

#include <CLI/CLI.hpp>

namespace afm::cli {

void setup_train_rloo_generator(CLI::App& train);

}  // namespace afm::cli
