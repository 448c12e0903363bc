// `afm-train reward`: reward-model training on preference pairs (train/reward_train.h,
// docs/rl.md "Reward model").
#pragma once

#include <CLI/CLI.hpp>

namespace afm::train {

void add_reward_command(CLI::App& app);

}  // namespace afm::train
