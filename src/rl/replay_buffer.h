// The replay buffer of asynchronous RLOO: a Redis stream of trajectory groups (trajectory.h)
// read through a consumer group (docs/rl.md).
//
// Contract:
// - publish() appends one group (XADD); once it returns, the group survives the generator.
// - read_pending() returns entries this consumer was given before and never acknowledged
//   (after a restart of the updater), in their original order, with ids after `after` ("0":
//   from the first); read_new() hands out new entries, blocking up to `block_ms` for them.
//   acknowledge() acknowledges and deletes entries (XACK + XDEL) once the updater's checkpoint
//   covers them, so the stream holds exactly what is not yet consumed for good. backlog() counts
//   the entries not yet delivered to any updater (XLEN minus the pending ones): what generators
//   throttle on.
// - Errors: broker errors as RedisClient reports them (Error kIo / kInvalidArgument).
// Not thread-safe (one RedisClient).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "broker/redis_client.h"
#include "rl/broker_keys.h"

namespace afm::rl {

struct StreamEntry {
  std::string id;       // the stream entry id, "ms-seq"
  std::string payload;  // the group's JSON; empty when the entry has no "group" field
};

class ReplayBuffer {
 public:
  ReplayBuffer(broker::RedisClient& client, const std::string& run);

  std::string publish(const std::string& group_json);
  int64_t backlog();

  void create_consumer_group();  // idempotent; creates the stream too
  std::vector<StreamEntry> read_pending(const std::string& consumer, const std::string& after,
                                        int64_t count);
  std::vector<StreamEntry> read_new(const std::string& consumer, int64_t count, int64_t block_ms);
  void acknowledge(const std::vector<std::string>& ids);

 private:
  std::vector<StreamEntry> read(std::vector<std::string> args);

  broker::RedisClient& client_;
  BrokerKeys keys_;
};

}  // namespace afm::rl
