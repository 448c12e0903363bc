// `afm eval [-m MODEL | --server URL] [--tasks ...] [--json] ...`: task suites (perplexity, the
// held-out evaluation generator's tasks, lm-eval tasks) against a model or a running server.
// The suites are Python (lm-eval and the generator are), so this command runs the suite runner,
// eval/afm_eval.py, with every argument unchanged (--help included) and the path of this afm
// binary; see docs/evaluation.md.
//
// Where things are found:
//   runner  <dir of afm>/../eval/afm_eval.py (a build tree inside the checkout), else
//           <dir of afm>/../share/afm/eval/afm_eval.py (an installed prefix);
//   Python  $AFM_PYTHON, else the checkout's .venv/bin/python, else python3 beside afm (a
//           virtual environment's bin/), else python3 on PATH.
// Errors: a missing runner or Python is an afm::Error naming what is missing; otherwise the
// runner's exit status is this command's.
#include <spawn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "base/error.h"
#include "command.h"

extern char** environ;

namespace afm::cli {
namespace {

namespace fs = std::filesystem;

fs::path afm_binary() { return fs::read_symlink("/proc/self/exe"); }

fs::path suite_runner(const fs::path& bin_dir) {
  for (const fs::path& p : {bin_dir / ".." / "eval" / "afm_eval.py",
                            bin_dir / ".." / "share" / "afm" / "eval" / "afm_eval.py"}) {
    if (fs::exists(p)) return fs::weakly_canonical(p);
  }
  throw_error(ErrorCode::kNotFound,
              "the evaluation suites are not installed: no eval/afm_eval.py next to " +
                  bin_dir.string() + " (run afm from its build tree or an installed prefix)");
}

// The interpreter, as a path to run (absolute) or a name to look up on PATH.
std::string python_for(const fs::path& runner, const fs::path& bin_dir) {
  if (const char* env = std::getenv("AFM_PYTHON"); env && *env) return env;
  const fs::path venv = runner.parent_path().parent_path() / ".venv" / "bin" / "python";
  if (fs::exists(venv)) return venv.string();
  if (fs::exists(bin_dir / "python3")) return (bin_dir / "python3").string();
  return "python3";
}

int run_suites(const std::vector<std::string>& args) {
  const fs::path self = afm_binary();
  const fs::path runner = suite_runner(self.parent_path());
  const std::string python = python_for(runner, self.parent_path());
  std::vector<std::string> argv_s{python, runner.string(), "--afm", self.string()};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid;
  if (posix_spawnp(&pid, python.c_str(), nullptr, nullptr, argv.data(), environ) != 0) {
    throw_error(ErrorCode::kNotFound, "afm eval needs Python 3 (" + python +
                                          " could not be started; set AFM_PYTHON to one)");
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void setup_eval(CLI::App& root) {
  CLI::App* cmd = root.add_subcommand(
      "eval", "Task suites against a model or a server: perplexity, extraction / arithmetic / "
              "tools / chat, lm-eval tasks (afm eval --help)");
  cmd->prefix_command();
  cmd->set_help_flag();
  cmd->callback([cmd] {
    const int status = run_suites(cmd->remaining());
    if (status != 0) throw CLI::RuntimeError(status);
  });
}

}  // namespace

AFM_COMMAND(eval, setup_eval);

}  // namespace afm::cli
