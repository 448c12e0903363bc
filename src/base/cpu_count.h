// How many CPUs this process may use, for thread-count defaults.
//
// available_cores(): the logical CPUs in the process's affinity mask (sched_getaffinity), so a
// taskset or container limit is respected. physical_cores(): the same CPUs with SMT siblings
// counted once: compute threads on two hyperthreads of one core mostly wait for each other,
// and a thread pool larger than the cores it runs on spends its time descheduled at barriers.
// Both are at least 1 and fall back to std::thread::hardware_concurrency() when the kernel
// does not say. Thread safety: reentrant.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace afm {

int available_cores();
int physical_cores();

// The ids of the CPUs in this process's affinity mask (empty when unknown).
std::vector<int> affinity_cpus();

// The core count for `cpus`, where siblings_of(cpu) is the cpu's
// topology/thread_siblings_list text ("0,64", "2-3"): CPUs with the same list share a core.
// A CPU whose list is unknown (nullopt) counts as a core of its own.
int count_physical_cores(const std::vector<int>& cpus,
                         const std::function<std::optional<std::string>(int)>& siblings_of);

}  // namespace afm
