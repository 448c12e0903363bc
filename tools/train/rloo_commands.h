// `afm-train rloo` and `afm-train rloo-updater` (docs/rl.md):
//   rloo [--sync]                      the synchronous loop (rloo_run.h), the default
//   rloo --generators N [--broker A]   the asynchronous run on this machine: starts a Redis
//                                      server (unless --broker names one), N generators
//                                      (`afm train rloo-generator`) and the updater, and
//                                      supervises them (rloo_launch.h)
//   rloo-updater --broker A            only the updater (rloo_updater.h), for runs spread over
//                                      machines
#pragma once

#include <CLI/CLI.hpp>

namespace afm::train {

// `argv` is the program's (the launcher passes this command's own arguments on to the
// updater); `status` receives the exit status of a launched asynchronous run (0 otherwise).
void add_rloo_commands(CLI::App& app, int argc, char** argv, int& status);

}  // namespace afm::train
