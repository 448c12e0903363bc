// The `afm` command-line tool. Subcommands live in cmd_*.cpp (ARCHITECTURE.md section 6).
#include <cstdio>
#include <map>
#include <string>

#include "base/cpu_features.h"
#include "base/error.h"
#include "command.h"

namespace afm::cli {

namespace {
std::map<std::string, CommandSetup>& registry() {
  static std::map<std::string, CommandSetup> commands;
  return commands;
}
}  // namespace

CommandRegistrar::CommandRegistrar(const char* name, CommandSetup setup) {
  registry()[name] = setup;
}

void add_registered_commands(CLI::App& root) {
  for (auto& [name, setup] : registry()) setup(root);
}

}  // namespace afm::cli

int main(int argc, char** argv) {
  // Before any thread exists: Linux kills a thread that touches AMX without this permission.
  afm::request_amx_permission();
  CLI::App app{"afm: AFM-style language models: convert, inspect, tokenize, run"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "afm 0.1.0");
  afm::cli::add_registered_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const afm::Error& e) {
    std::fprintf(stderr, "afm: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "afm: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
