// The policy updater of asynchronous RLOO (docs/rl.md): consumes trajectory groups from the
// replay buffer on the broker, updates the LoRA policy with rloo_update() and publishes every
// new version (the "parameter server": versioned adapter files in <out>/policy/ and their bytes
// plus an announcement on the broker, policy_channel.h).
//
// Per step: read groups (first those this consumer was given before and never acknowledged,
// in order, then new ones) until `prompts_per_step` usable groups are in hand; a group sampled
// by a version more than `max_staleness` behind the current one is dropped; the rest are
// weighted by the truncated importance ratio between the current policy and their behaviour
// log-probabilities. After the update the new version is published. Groups are acknowledged
// (and deleted from the stream) only once a checkpoint covers them, so an updater killed at
// any point and restarted resumes from its checkpoint, re-reads the same groups in the same
// order and recomputes the same next step.
//
// The log (<out>/log.jsonl) has per step the reward (overall and per task), KL, loss, mean
// importance ratio and truncated share, the ids of the groups used and their staleness (mean,
// histogram so far), groups dropped as stale or malformed, the generators' sampling tokens/s,
// the updater's own tokens/s and the seconds spent waiting for data and updating.
//
// Errors: afm::Error from the base model, the checkpoint, the broker (kIo once the retry window
// is spent). A malformed group is logged and skipped, never fatal.
#pragma once

#include <cstdint>
#include <string>

#include "broker/redis_client.h"
#include "train/rloo_run.h"

namespace afm::train {

struct RlooUpdaterOptions {
  RlooRunOptions rl;  // base, out_dir, LoRA, objective, optimiser, steps, prompts_per_step ...
  broker::BrokerAddress broker;
  broker::RedisOptions redis;
  std::string run_name;  // the keys' namespace on the broker (rl/broker_keys.h)
  int64_t max_staleness = 2;
  std::string consumer = "updater";
};

RlooRunResult run_rloo_updater(const RlooUpdaterOptions& options);

}  // namespace afm::train
