// libFuzzer target: any bytes as a trajectory group from the broker (rl/trajectory.h) give the
// group or an afm::Error; a decoded group satisfies the format's rules and survives a round
// trip through encode_group.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/error.h"
#include "rl/trajectory.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const afm::rl::TrajectoryGroup g =
        afm::rl::decode_group(std::string_view(reinterpret_cast<const char*>(data), size));
    if (g.samples.empty()) std::abort();
    for (const afm::rl::TrajectorySample& s : g.samples) {
      if (static_cast<int64_t>(s.behaviour.size()) != afm::rl::trained_count(s)) std::abort();
      for (const auto& [b, e] : s.trained)
        if (b < 1 || e <= b || e > static_cast<int64_t>(s.tokens.size())) std::abort();
    }
    const afm::rl::TrajectoryGroup back = afm::rl::decode_group(afm::rl::encode_group(g));
    if (back.samples.size() != g.samples.size() || back.id != g.id) std::abort();
  } catch (const afm::Error&) {
  }
  return 0;
}
