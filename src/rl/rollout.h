// The runtime side of RLOO (docs/rl.md): a policy (the base model plus an optional LoRA
// adapter) answers a task with afm's engine as users run it (ChatService: the chat template,
// guided decoding for response formats and tool calls) with plain temperature sampling (no
// top-k / top-p / min-p, so samples follow the policy the loss assumes); the answer is scored
// by the task's rule reward (a free-answer task by the reward model, set_reward_model) and
// rendered as SFT renders conversations.
//
// behaviour_logprobs() scores a rendered sample under the current policy with one batched
// forward pass (model::Context::eval_all): the log-softmax of the runtime's logits at
// temperature 1 without grammar mask, for every trained token; this is what an asynchronous
// generator publishes, so the updater can weight samples drawn by an older policy.
//
// Thread safety: one Rollout per thread (it owns a one-slot ChatService).
#pragma once

#include <cstdint>
#include <memory>

#include "framework/chat_service.h"
#include "framework/loaded_model.h"
#include "framework/training_example.h"
#include "rl/reward_model.h"
#include "rl/rl_task.h"
#include "rl/trajectory.h"

namespace afm::rl {

struct RolloutOptions {
  int64_t max_new_tokens = 128;
  float temperature = 1.0f;
  int threads = 1;
};

struct DrawnSample {
  TrainingExample example;  // prompt + completion; `trained` marks the completion
  double reward = 0;
  int64_t completion_tokens = 0;
};

class Rollout {
 public:
  // Error(kUnsupported) when the model has no chat template afm implements.
  Rollout(std::shared_ptr<const LoadedModel> model, RolloutOptions options);

  // The adapter to sample with from now on (null: the base model).
  void use_policy(std::shared_ptr<const model::LoraAdapter> adapter);
  // Scores free-answer tasks (RewardKind::kFreeAnswer); without one they are an error.
  void set_reward_model(std::shared_ptr<const RewardModel> reward_model);
  DrawnSample sample(const RlTask& task, uint64_t seed);
  std::vector<float> behaviour_logprobs(const TrainingExample& example) const;
  // sample() plus behaviour_logprobs(), in the shape a generator publishes.
  TrajectorySample trajectory(const RlTask& task, uint64_t seed);

  const LoadedModel& model() const { return *model_; }

 private:
  RolloutOptions options_;
  std::shared_ptr<const LoadedModel> model_;
  ChatService service_;
  ChatAdapter adapter_;
  std::shared_ptr<const RewardModel> reward_model_;
};

// The reward model at `path` when it is not empty (one compute thread per scoring), else null.
std::shared_ptr<const RewardModel> load_reward_model(const std::string& path, int threads);

}  // namespace afm::rl
