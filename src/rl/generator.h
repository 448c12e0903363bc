// A trajectory generator of asynchronous RLOO (docs/rl.md): a process that loads the base
// model, follows the policy versions the updater announces on the broker, samples prompts'
// k completions with afm's runtime (rollout.h), scores them and publishes each prompt's group
// with its behaviour log-probabilities and policy version to the replay buffer.
//
// Loop: stop when the run is finished; take the announced version (waiting for the first),
// loading it at this step boundary when it is new (bytes from the broker, written atomically to
// `work_dir/policy-vN.gguf`, checked against the base by LoraAdapter::load); wait while the
// backlog of unconsumed groups is at `max_backlog` (so generators never run far ahead of the
// updater); sample one group; publish it. Prompts and sampling seeds follow from (seed,
// generator id, a start nonce, group number), so restarted generators draw new samples.
//
// Errors: afm::Error from the prompts, the model, the broker (unreachable after the retry
// window: kIo naming the address).
#pragma once

#include <cstdint>
#include <string>

#include "broker/redis_client.h"
#include "rl/rollout.h"

namespace afm::rl {

struct GeneratorOptions {
  std::string base, prompts, work_dir, run;
  std::string reward_model;  // scores free-answer prompts; empty: rule rewards only
  broker::BrokerAddress broker;
  broker::RedisOptions redis;
  int64_t generator_id = 0;
  int64_t samples_per_prompt = 4;
  int64_t max_backlog = 16;
  int64_t max_groups = 0;  // 0: until the run is finished
  RolloutOptions rollout;
  uint64_t seed = 1;
  bool verbose = true;  // one line on stderr per policy version loaded
};

struct GeneratorStats {
  int64_t groups = 0, samples = 0, completion_tokens = 0, policies_loaded = 0;
  double sample_seconds = 0;
};

GeneratorStats run_generator(const GeneratorOptions& options);

}  // namespace afm::rl
