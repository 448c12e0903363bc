// physical_cores() counts SMT siblings once; the counting is checked on made-up topologies.
#include "base/cpu_count.h"

#include <gtest/gtest.h>

#include <map>

namespace afm {
namespace {

std::function<std::optional<std::string>(int)> topology(std::map<int, std::string> lists) {
  return [lists](int cpu) -> std::optional<std::string> {
    const auto it = lists.find(cpu);
    if (it == lists.end()) return std::nullopt;
    return it->second;
  };
}

TEST(CpuCount, SmtSiblingsCountOnce) {
  // Two cores with two threads each, numbered as Linux does on most x86 machines.
  const auto smt = topology({{0, "0,2"}, {1, "1,3"}, {2, "0,2"}, {3, "1,3"}});
  EXPECT_EQ(count_physical_cores({0, 1, 2, 3}, smt), 2);
  EXPECT_EQ(count_physical_cores({0, 2}, smt), 1);  // an affinity mask of one core's threads
  EXPECT_EQ(count_physical_cores({0, 1}, smt), 2);
  const auto ranges = topology({{0, "0-1"}, {1, "0-1"}, {2, "2-3"}, {3, "2-3"}});
  EXPECT_EQ(count_physical_cores({0, 1, 2, 3}, ranges), 2);
}

TEST(CpuCount, UnknownTopologyCountsEveryCpu) {
  EXPECT_EQ(count_physical_cores({0, 1, 2}, topology({})), 3);
  EXPECT_EQ(count_physical_cores({0, 1, 2}, topology({{0, "0-1"}, {1, "0-1"}})), 2);
  EXPECT_EQ(count_physical_cores({}, topology({})), 1);
}

TEST(CpuCount, ThisMachineHasAtLeastOneCoreAndNoMoreThanItsCpus) {
  EXPECT_GE(physical_cores(), 1);
  EXPECT_LE(physical_cores(), available_cores());
}

}  // namespace
}  // namespace afm
