// `afm-train rloo`: reinforcement learning with RLOO (rloo.h) on rule-rewarded tasks
// (rl/rl_task.h), synchronous: each step samples with the current policy, scores, then
// updates. docs/rl.md.
//
// The policy is the base GGUF plus LoRA branches (language_model.h attach_lora); the frozen
// reference of the KL term is the base itself (branches switched off), so no second model is
// held. Per step:
//   1. the policy is written as an adapter (<out>/policy.gguf, atomic) and the runtime loads
//      it: the completions come from afm's own engine (ChatService: the chat template, guided
//      decoding for response formats and tool calls, temperature sampling) as users run it;
//   2. `prompts_per_step` tasks (chosen by a hash of seed and step) get `samples_per_prompt`
//      completions each (sampling seeds from seed, step, prompt and sample) and their rewards;
//   3. each prompt + completion is rendered as SFT renders conversations
//      (framework/training_example.h); the completion's tokens carry the loss;
//   4. the policy's and the reference's log-probabilities of those tokens give rloo_loss();
//      the behaviour log-probabilities are the policy's own (synchronous: the version that
//      sampled is the version that updates, so every importance ratio is 1); AdamW updates
//      the branches.
// Checkpoints (branches and optimiser) every `checkpoint_every` steps and at the end; a run
// resumes from <out>/checkpoint.pt. The result is <out>/adapter.gguf (and <out>/model.gguf
// with `merged`). Log records in <out>/log.jsonl: per step the mean reward (overall and per
// task kind), KL, loss, completion tokens, and the seconds spent sampling and updating.
//
// Errors: afm::Error from the prompts (FILE:LINE), the base model or the run.
#pragma once

#include <cstdint>
#include <string>

#include "train/adamw.h"
#include "train/language_model.h"
#include "train/rloo.h"
#include "train/trainer.h"

namespace afm::train {

struct RlooRunOptions {
  std::string base;     // GGUF: the starting policy and the KL reference
  std::string prompts;  // JSONL conversations (rl/rl_task.h)
  std::string reward_model;  // scores free-answer prompts (rl/reward_model.h); empty: none
  std::string out_dir;
  LoraSpec lora{.rank = 16, .alpha = 32};
  RlooOptions rloo;
  AdamWOptions optim{.lr = 2e-4, .beta1 = 0.9, .beta2 = 0.99, .eps = 1e-8, .weight_decay = 0};
  double grad_clip = 1.0;
  int64_t steps = 50, prompts_per_step = 8, samples_per_prompt = 4;
  int64_t max_new_tokens = 128;
  float temperature = 1.0f;
  int64_t checkpoint_every = 10;
  uint64_t seed = 1;
  bool merged = false;
  RunOptions run;
};

struct RlooRunResult {
  int64_t steps_done = 0;
  double last_reward = 0;  // mean reward of the last step's samples
  std::string adapter_path, model_path;
};

RlooRunResult run_rloo(const RlooRunOptions& options);

}  // namespace afm::train
