#include "train_options.h"

#include <algorithm>
#include <map>
#include <string>

#include "train/cpu_setup.h"

namespace afm::train {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t end = std::min(s.find(',', start), s.size());
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

void add_run_options(CLI::App* cmd, RunOptions& run) {
  cmd->add_option("--device", run.device, "cpu, cuda or cuda:N")->capture_default_str();
  cmd->add_option("-t,--threads", run.threads,
                  "CPU compute threads: libtorch's and the BLAS's, one pool (default: the "
                  "physical cores)")
      ->check(CLI::Range(1, 4096));
  const std::map<std::string, CpuBf16> bf16_modes{
      {"auto", CpuBf16::kAuto}, {"on", CpuBf16::kOn}, {"off", CpuBf16::kOff}};
  cmd->add_option("--cpu-bf16", run.cpu_bf16,
                  "bf16 autocast for matrix products on the CPU: auto (where the CPU has "
                  "AVX512-BF16), on or off")
      ->transform(CLI::CheckedTransformer(bf16_modes, CLI::ignore_case));
  cmd->add_flag("--json", run.json_stdout, "Print every log record as JSON on stdout");
  cmd->add_flag("--fresh", run.fresh, "Start from step 0 even if a checkpoint exists");
  cmd->add_option("--stop-after", run.stop_after,
                  "Stop (with a checkpoint) after this many steps of this run");
}

}  // namespace afm::train
