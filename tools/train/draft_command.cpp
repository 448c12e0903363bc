#include "draft_command.h"

#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "base/error.h"
#include "gguf/types.h"
#include "train/draft.h"
#include "train_options.h"

namespace afm::train {
namespace {

const auto kPositive = CLI::Range(int64_t{1}, int64_t{1} << 40);

void add_shape_options(CLI::App* cmd, DraftShape& s) {
  cmd->add_option("--arch", s.arch,
                  "llama or afm-device (default: the base's if dense, else afm-device)")
      ->check(CLI::IsMember({"llama", "afm-device"}));
  cmd->add_option("--layers", s.layers, "Draft layers")->capture_default_str()->check(kPositive);
  cmd->add_option("--width,--n-embd", s.width, "Embedding width (default: the base's)")
      ->check(kPositive);
  cmd->add_option("--heads", s.heads, "Query heads (default: the base's)")->check(kPositive);
  cmd->add_option("--kv-heads", s.kv_heads,
                  "K/V heads (default: the base's when they divide --heads)")
      ->check(kPositive);
  cmd->add_option("--ff", s.ff, "Feed-forward width (default: the base's, scaled with the width)")
      ->check(kPositive);
}

void add_schedule_options(CLI::App* cmd, DraftOptions& o) {
  cmd->add_option("--steps", o.optim.steps, "Optimiser steps")
      ->capture_default_str()
      ->check(kPositive);
  cmd->add_option("--batch-size,--batch", o.optim.batch_size, "Rows per micro-batch")
      ->capture_default_str()
      ->check(kPositive);
  cmd->add_option("--grad-accum", o.optim.grad_accum, "Micro-batches per step")
      ->capture_default_str()
      ->check(kPositive);
  cmd->add_option("--seq-len,--seq", o.seq_len, "Positions per row")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{2}, int64_t{1} << 20));
  cmd->add_option("--lr", o.optim.lr, "Peak learning rate")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--min-lr", o.optim.min_lr, "Learning rate at the end of the cosine")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--warmup", o.optim.warmup_steps, "Warmup steps")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--weight-decay", o.optim.weight_decay, "AdamW weight decay")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--eval-every", o.eval_every, "Steps between held-out evaluations (0: end only)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--eval-batches", o.eval_batches, "At most this many held-out batches per source")
      ->capture_default_str()
      ->check(kPositive);
  cmd->add_option("--log-every", o.log_every, "Steps between log records")
      ->capture_default_str()
      ->check(kPositive);
  cmd->add_option("--checkpoint-every", o.checkpoint_every, "Steps between checkpoints")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", o.seed, "Seed of the draft's initialisation, packing and batches")
      ->capture_default_str();
}

}  // namespace

void add_draft_command(CLI::App& app) {
  auto o = std::make_shared<DraftOptions>();
  auto type = std::make_shared<std::string>("q8_0");
  auto init = std::make_shared<std::string>("base");
  // A draft's layers start mostly new: a larger learning rate than fine-tuning.
  o->optim.lr = 1e-3, o->optim.min_lr = 1e-4, o->optim.warmup_steps = 20, o->optim.steps = 300;
  o->optim.weight_decay = 0.0;
  CLI::App* cmd = app.add_subcommand(
      "draft",
      "Distil a small draft model for speculative decoding from a base GGUF (KL to the frozen "
      "base's next-token distribution); writes <out>/model.gguf with the base's tokenizer");
  cmd->add_option("--base", o->base, "The base (teacher) GGUF model")->required();
  cmd->add_option("--shards", o->shards,
                  "Token shards of `afm data shards`, made with the base's tokenizer");
  cmd->add_option("--data", o->data,
                  "Conversations rendered by `afm data sft` (afm train draft renders a .jsonl)");
  cmd->add_option("--sft-share", o->sft_share,
                  "With --shards and --data: share of rows from conversations")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--out", o->out_dir, "Run folder (checkpoints, log.jsonl, model.gguf)")
      ->required();
  add_shape_options(cmd, o->shape);
  cmd->add_option("--init", *init,
                  "base: the base's embedding, output norm and first layers where shapes match; "
                  "embeddings: only the embedding (tied head) and output norm; random")
      ->capture_default_str()
      ->check(CLI::IsMember({"base", "embeddings", "random"}));
  cmd->add_option("--temperature", o->temperature, "Distillation temperature (loss scaled by T^2)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--ce-weight", o->ce_weight, "Weight of the next-token cross-entropy term")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  add_schedule_options(cmd, *o);
  cmd->add_option("--type", *type, "Matrix type of the draft: f32, f16, bf16, q8_0, q4_0")
      ->capture_default_str();
  cmd->add_option("--name", o->name, "general.name of the draft")->capture_default_str();
  add_run_options(cmd, o->run);
  cmd->callback([o, type, init] {
    const auto t = gguf::tensor_type_from_name(*type);
    if (!t) throw_error(ErrorCode::kInvalidArgument, "unknown --type " + *type);
    o->export_type = *t;
    const std::map<std::string, DraftInit> inits{{"base", DraftInit::kBase},
                                                 {"embeddings", DraftInit::kEmbeddings},
                                                 {"random", DraftInit::kRandom}};
    o->init = inits.at(*init);
    const DraftResult r = run_draft(*o);
    if (r.model_path.empty()) {
      std::printf("stopped at step %lld of %lld (resume with the same command)\n",
                  static_cast<long long>(r.run.steps_done), static_cast<long long>(o->optim.steps));
      return;
    }
    const nlohmann::json& e = r.evaluation;
    std::printf("wrote %s (%lld layers, held-out KL %.4f, greedy agreement %.3f)\n",
                r.model_path.c_str(), static_cast<long long>(r.config.block_count),
                e.value("val_kl", 0.0), e.value("val_agreement", 0.0));
  });
}

}  // namespace afm::train
