// Where one RLOO run keeps its state on the broker (docs/rl.md "On the broker"). Every key of
// a run starts with "afm:rloo:<run>:", so runs sharing one Redis server never meet.
#pragma once

#include <cstdint>
#include <string>

namespace afm::rl {

struct BrokerKeys {
  std::string prefix;
  explicit BrokerKeys(const std::string& run) : prefix("afm:rloo:" + run + ":") {}

  // The stream of trajectory groups and the consumer group the updaters read it through.
  std::string trajectories() const { return prefix + "trajectories"; }
  std::string consumer_group() const { return "updaters"; }
  // The announced version, and each version's adapter bytes.
  std::string policy_version() const { return prefix + "policy:version"; }
  std::string policy(int64_t version) const { return prefix + "policy:" + std::to_string(version); }
  // Set when the updater has finished.
  std::string done() const { return prefix + "done"; }
};

}  // namespace afm::rl
