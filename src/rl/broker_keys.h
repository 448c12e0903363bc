// Where one RLOO run keeps its state on the broker (docs/rl.md "On the broker"). Every key of
// a run starts with "afm:rloo:<run>:", so runs sharing one Redis server never meet.
#pragma once

#include <cstdint>
#include <string>

namespace afm::rl {

struct BrokerKeys {
  std::string prefix;
  explicit BrokerKeys(const std::string& run) : prefix("afm:rloo:" + run + ":") {}

  std::string trajectories() const { return prefix + "trajectories"; }  // stream of groups
  std::string consumer_group() const { return "updaters"; }
  std::string policy_version() const { return prefix + "policy:version"; }  // the announcement
  std::string policy(int64_t version) const {  // the adapter's bytes
    return prefix + "policy:" + std::to_string(version);
  }
  std::string done() const { return prefix + "done"; }  // set when the updater has finished
};

}  // namespace afm::rl
