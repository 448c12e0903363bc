// Subcommand registry for the `afm` CLI. Each tools/afm/cmd_<name>.cpp registers itself with
// AFM_COMMAND; main.cpp builds the CLI11 app from the registry, so adding a command touches no
// central list.
//
// Contract: a command's callback throws afm::Error for input-dependent failures; main prints
// one line "afm: error: <message>" on stderr and exits 1. Usage errors (CLI11 parse errors:
// unknown commands and options, values that fail their checks, option_checks.h) print one line
// and exit 2. CLI::RuntimeError(status) exits with that status and prints nothing.
#pragma once

#include <CLI/CLI.hpp>

namespace afm::cli {

using CommandSetup = void (*)(CLI::App& root);

struct CommandRegistrar {
  CommandRegistrar(const char* name, CommandSetup setup);
};

// Adds every registered command to `root`, in name order.
void add_registered_commands(CLI::App& root);

}  // namespace afm::cli

#define AFM_COMMAND(name, setup) \
  static const ::afm::cli::CommandRegistrar afm_command_registrar_##name(#name, setup)
