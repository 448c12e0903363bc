// `afm-train reward`: trains a reward model (report section 5.1; docs/rl.md "Reward model"):
// an afm model whose output row `score_token` becomes a scalar head, fine-tuned (every
// parameter) on preference pairs (rl/preference_pair.h) with reward_loss(): pairwise
// preference loss plus single-sided grading. The score of a reply is that row's logit after
// the reply's last token; prompt + reply are rendered as SFT renders conversations.
//
// A deterministic share of the pairs (`val_fraction`, by a hash of seed and index) is held out;
// the log (<out>/log.jsonl) has per step the loss terms and the batch's accuracy, and per
// evaluation the held-out pairwise accuracy, loss and margin. Checkpoints and resume as every
// run. The result, <out>/model.gguf, carries `afm.reward.score_token` and the base's tokenizer
// and chat template, so rl::RewardModel (and any afm runtime) scores with it.
//
// Errors: afm::Error from the data (FILE:LINE), the base, the run; kInvalidArgument when
// every pair is longer than `max_tokens` or nothing is left to train on.
#pragma once

#include <cstdint>
#include <string>

#include "gguf/types.h"
#include "train/adamw.h"
#include "train/trainer.h"

namespace afm::train {

struct RewardTrainOptions {
  std::string base, data, out_dir;
  int64_t steps = 200, batch_size = 8, warmup = 10;
  AdamWOptions optim{.lr = 5e-5, .beta1 = 0.9, .beta2 = 0.95, .eps = 1e-8, .weight_decay = 0.0};
  double min_lr = 0, grad_clip = 1.0;
  double grade_weight = 0.1;
  double val_fraction = 0.1;
  int64_t eval_every = 50, checkpoint_every = 100, max_tokens = 1024;
  int32_t score_token = 0;
  uint64_t seed = 1;
  gguf::TensorType export_type = gguf::TensorType::kF32;
  RunOptions run;
};

struct RewardTrainResult {
  int64_t steps_done = 0, train_pairs = 0, val_pairs = 0;
  double val_accuracy = 0, val_loss = 0;
  std::string model_path;
};

RewardTrainResult run_reward_training(const RewardTrainOptions& options);

}  // namespace afm::train
