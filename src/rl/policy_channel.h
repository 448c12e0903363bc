// The "parameter server" of asynchronous RLOO (docs/rl.md): versioned policy adapters on the
// broker plus the announcement of the newest one.
//
// Contract:
// - publish() stores version v's adapter bytes under their own key, then sets the announced
//   version to v (a reader never sees a version whose bytes are missing), then deletes the
//   bytes of version v - keep (generators still loading an older one get kNotFound and take
//   the newest next time).
// - announced() is the newest version, nullopt before the first publish(); fetch() returns a
//   version's bytes, Error(kNotFound) once deleted.
// - finish() / finished(): the updater's "done" flag; generators stop when they see it.
// Not thread-safe (one RedisClient).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "broker/redis_client.h"
#include "rl/broker_keys.h"

namespace afm::rl {

class PolicyChannel {
 public:
  PolicyChannel(broker::RedisClient& client, const std::string& run);

  void publish(int64_t version, const std::string& adapter_bytes, int64_t keep);
  std::optional<int64_t> announced();
  std::string fetch(int64_t version);
  void finish();
  bool finished();
  void reset_finished();  // a new run under the same name

 private:
  broker::RedisClient& client_;
  BrokerKeys keys_;
};

}  // namespace afm::rl
