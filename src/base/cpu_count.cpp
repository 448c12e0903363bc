#include "base/cpu_count.h"

#include <sched.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <thread>

namespace afm {
namespace {

int hardware_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

std::optional<std::string> sysfs_siblings(int cpu) {
  std::ifstream in("/sys/devices/system/cpu/cpu" + std::to_string(cpu) +
                   "/topology/thread_siblings_list");
  std::string line;
  if (!in || !std::getline(in, line) || line.empty()) return std::nullopt;
  return line;
}

}  // namespace

std::vector<int> affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

int available_cores() {
  const size_t n = affinity_cpus().size();
  return n > 0 ? static_cast<int>(n) : hardware_threads();
}

int count_physical_cores(const std::vector<int>& cpus,
                         const std::function<std::optional<std::string>(int)>& siblings_of) {
  std::set<std::string> cores;
  int unknown = 0;
  for (int cpu : cpus) {
    if (const std::optional<std::string> list = siblings_of(cpu)) {
      cores.insert(*list);
    } else {
      ++unknown;
    }
  }
  return std::max(1, static_cast<int>(cores.size()) + unknown);
}

int physical_cores() {
  const std::vector<int> cpus = affinity_cpus();
  if (cpus.empty()) return hardware_threads();
  return count_physical_cores(cpus, sysfs_siblings);
}

}  // namespace afm
