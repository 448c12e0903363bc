// The `afm` command-line tool. Subcommands live in cmd_*.cpp (ARCHITECTURE.md section 6).
//
// Exit status: 0 on success, 1 for a runtime error (afm::Error: a file, a model, a schema),
// 2 for a usage error (an unknown command or option, a missing or out-of-range value). Either
// way one line on stderr names the problem.
#include <cstdio>
#include <cstring>
#include <map>
#include <new>
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

constexpr int kUsageError = 2;

std::string command_names(CLI::App& app) {
  std::string names;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    names += (names.empty() ? "" : ", ") + sub->get_name();
  }
  return names;
}

// "afm" or "afm schema sample": the command line's parsed command chain.
std::string command_path(const CLI::App& root) {
  std::string path = "afm";
  for (const CLI::App* app = &root;;) {
    const std::vector<CLI::App*> parsed = app->get_subcommands();
    if (parsed.empty()) return path;
    app = parsed.front();
    path += " " + app->get_name();
  }
}

// The innermost command of the parsed chain.
CLI::App& innermost(CLI::App& root) {
  CLI::App* app = &root;
  while (!app->get_subcommands().empty()) app = app->get_subcommands().front();
  return *app;
}

// One line for a usage error. CLI11 writes a failed check as "--temp: must be >= 0, got -1";
// ours read as one sentence.
std::string usage_message(CLI::App& root, const CLI::Error& e) {
  std::string message = e.what();
  const size_t colon = message.find(": must ");
  if (colon != std::string::npos && message.rfind(' ', colon) == std::string::npos) {
    message.erase(colon, 1);
  }
  if (e.get_name() == "RequiredError" && message.rfind("A subcommand", 0) == 0) {
    message = "a command is required (commands: " + command_names(innermost(root)) + ")";
  }
  return message + " (see " + command_path(root) + " --help)";
}

// A word where a command must be that names none: CLI11 would report it as a missing command.
bool unknown_command(CLI::App& root, int argc, char** argv) {
  CLI::App* app = &root;
  std::string path = "afm";
  for (int i = 1; i < argc && app->get_require_subcommand_min() > 0; ++i) {
    if (argv[i][0] == '-') return false;  // an option (--help, --version): CLI11 handles it
    CLI::App* next = nullptr;
    for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) {
      if (sub->get_name() == argv[i]) next = sub;
    }
    if (!next) {
      std::fprintf(stderr, "%s: unknown command '%s' (commands: %s)\n", path.c_str(), argv[i],
                   command_names(*app).c_str());
      return true;
    }
    app = next;
    path += " " + next->get_name();
  }
  return false;
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
  if (afm::cli::unknown_command(app, argc, argv)) return afm::cli::kUsageError;
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a command's own exit status (afm train: the trainer's)
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::fprintf(stderr, "afm: error: %s\n", afm::cli::usage_message(app, e).c_str());
    return afm::cli::kUsageError;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "afm: error: out of memory (a smaller --ctx-size needs less)\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "afm: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
