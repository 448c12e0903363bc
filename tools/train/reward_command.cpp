#include "reward_command.h"

#include <cstdio>
#include <memory>

#include "base/error.h"
#include "gguf/types.h"
#include "train/reward_train.h"
#include "train_options.h"

namespace afm::train {

void add_reward_command(CLI::App& app) {
  auto o = std::make_shared<RewardTrainOptions>();
  auto type = std::make_shared<std::string>("f32");
  CLI::App* cmd = app.add_subcommand(
      "reward",
      "Train a reward model on preference pairs: pairwise loss plus single-sided "
      "grading; writes <out>/model.gguf (docs/rl.md)");
  cmd->add_option("--base", o->base, "GGUF model to start from (its tokenizer and template)")
      ->required();
  cmd->add_option("--data", o->data,
                  "JSONL preference pairs: messages, chosen, rejected, optional grades "
                  "(afm data preferences writes them)")
      ->required();
  cmd->add_option("--out", o->out_dir, "Run folder (checkpoints, log.jsonl, model.gguf)")
      ->required();
  cmd->add_option("--steps", o->steps, "Optimiser steps")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  cmd->add_option("--batch-size", o->batch_size, "Pairs per step")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 16));
  cmd->add_option("--lr", o->optim.lr, "Peak learning rate")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--warmup", o->warmup, "Warmup steps")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--grade-weight", o->grade_weight,
                  "Weight of the single-sided grading term (0: pairwise loss only)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--val-fraction", o->val_fraction, "Share of pairs held out")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.9));
  cmd->add_option("--eval-every", o->eval_every, "Steps between held-out evaluations")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--checkpoint-every", o->checkpoint_every, "Steps between checkpoints")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-tokens", o->max_tokens, "Skip pairs with a longer side")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{2}, int64_t{1} << 20));
  cmd->add_option("--score-token", o->score_token,
                  "Output row that becomes the scalar head (a token the inputs never hold)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", o->seed, "Seed of the batches and the held-out split")
      ->capture_default_str();
  cmd->add_option("--type", *type, "Export type: f32, f16, bf16, q8_0")->capture_default_str();
  add_run_options(cmd, o->run);
  cmd->callback([o, type] {
    const auto t = gguf::tensor_type_from_name(*type);
    if (!t) throw_error(ErrorCode::kInvalidArgument, "unknown --type " + *type);
    o->export_type = *t;
    const RewardTrainResult r = run_reward_training(*o);
    if (!r.model_path.empty())
      std::printf("wrote %s (%lld steps, held-out accuracy %.3f on %lld pairs)\n",
                  r.model_path.c_str(), static_cast<long long>(r.steps_done), r.val_accuracy,
                  static_cast<long long>(r.val_pairs));
  });
}

}  // namespace afm::train
