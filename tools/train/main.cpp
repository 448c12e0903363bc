// `afm-train`: the libtorch trainer (`afm train pretrain|export|sft|adapter|draft` run it). Kept
// out of the `afm` binary so that the runtime never links libtorch.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/error.h"
#include "draft_command.h"
#include "expand_command.h"
#include "svd_command.h"
#include "gguf/types.h"
#include "launcher.h"
#include "train/checkpoint.h"
#include "train/cpu_setup.h"
#include "train/gguf_export.h"
#include "train/sft.h"
#include "train/trainer.h"
#ifdef AFM_TRAIN_WITH_RL
#include "reward_command.h"
#include "rloo_commands.h"
#endif
#include "train_options.h"

namespace {

using namespace afm;
using namespace afm::train;

// `--qat` and its options, shared by pretrain and sft.
struct QatArgs {
  bool on = false, float_embedding = false;
  double ema = 0.999;
  std::optional<QatSpec> spec() const {
    if (!on) return std::nullopt;
    return QatSpec{true, !float_embedding, ema};
  }
};

void add_qat_options(CLI::App* cmd, QatArgs& q) {
  cmd->add_flag("--qat", q.on,
                "Quantization-aware training (docs/compression.md): matrices trained through "
                "balanced 2-bit rounding with a learnable clipping factor per tensor, the "
                "embedding through 4-bit rounding, no weight decay; the model exports as "
                "q2_b / q4_0 from the EMA of the weights");
  cmd->add_flag("--qat-float-embedding", q.float_embedding,
                "With --qat: keep the embedding unquantized (exported as --type)");
  cmd->add_option("--qat-ema", q.ema, "With --qat: EMA decay of the weights (0: no EMA)")
      ->capture_default_str()->check(CLI::Range(0.0, 0.999999));
}

struct PretrainArgs {
  std::string config, shards, out_dir, init_from;
  QatArgs qat;
  int nproc = 1;
  char** argv = nullptr;
  int launcher_status = 0;
  RunOptions run;
};

void add_pretrain(CLI::App& app, PretrainArgs& a) {
  CLI::App* cmd = app.add_subcommand("pretrain", "Pretrain a model from a JSON config");
  cmd->add_option("--config", a.config, "Training configuration (docs/training.md)")->required();
  cmd->add_option("--shards", a.shards, "Use this shard folder instead of the config's");
  cmd->add_option("--out", a.out_dir, "Use this run folder instead of the config's");
  cmd->add_option("--init-from", a.init_from,
                  "Start from this GGUF model's weights (its shape replaces the config's model)");
  add_qat_options(cmd, a.qat);
  add_run_options(cmd, a.run);
  cmd->add_option("--peak-tflops", a.run.peak_tflops,
                  "Peak dense TFLOP/s for MFU (default: 989 on CUDA, none on CPU)");
  cmd->add_option("--nproc", a.nproc,
                  "Start this many local ranks (data parallel over Gloo; CUDA rank r uses "
                  "cuda:r); or set RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT as torchrun does")
      ->check(CLI::Range(1, 4096));
  cmd->callback([&a] {
    // The launcher's own process only starts the ranks; each rank runs this same command.
    if (a.nproc > 1 && std::getenv("WORLD_SIZE") == nullptr) {
      a.launcher_status = launch_local_ranks(a.nproc, a.argv);
      return;
    }
    TrainConfig config = load_train_config(a.config);
    if (!a.shards.empty()) config.shards = a.shards;
    if (!a.out_dir.empty()) config.out_dir = a.out_dir;
    const RunResult r = run_pretraining(config, a.run, {a.init_from, a.qat.spec()});
    const char* rank = std::getenv("RANK");
    if (!a.run.json_stdout && (rank == nullptr || std::string(rank) == "0"))
      std::printf("done: step %lld, loss %.4f, val loss %.4f, %.0f tokens/s\n",
                  static_cast<long long>(r.steps_done), r.last_loss, r.val_loss,
                  r.tokens_per_second);
  });
}

struct ExportArgs {
  std::string run_dir, out, type = "f32", tokenizer, name = "afm";
  bool live_weights = false;
};

void add_export(CLI::App& app, ExportArgs& a) {
  CLI::App* cmd = app.add_subcommand("export", "Write a checkpoint as a GGUF model file");
  cmd->add_option("--run", a.run_dir, "Run folder holding checkpoint.pt and checkpoint.json")
      ->required();
  cmd->add_option("--out", a.out, "Output .gguf")->required();
  cmd->add_option("--type", a.type,
                  "f32, f16, bf16, q8_0, q4_0 or q2_b (a QAT run's checkpoint writes its "
                  "matrices as q2_b with the learned factors whatever this says)")
      ->capture_default_str();
  cmd->add_option("--tokenizer-gguf", a.tokenizer, "GGUF whose tokenizer.* keys to copy");
  cmd->add_option("--name", a.name, "general.name")->capture_default_str();
  cmd->add_flag("--live-weights", a.live_weights,
                "A QAT run: export the weights as they are at the checkpoint, not their EMA");
  cmd->callback([&a] {
    auto type = gguf::tensor_type_from_name(a.type);
    if (!type) throw_error(ErrorCode::kInvalidArgument, "unknown --type " + a.type);
    // Only the model's shape matters here (pretraining and SFT runs both record it); the
    // checkpoint overwrites every parameter.
    const nlohmann::json saved = read_checkpoint_config(a.run_dir);
    if (!saved.contains("model"))
      throw_error(ErrorCode::kInvalidArgument,
                  a.run_dir + " trains LoRA branches, not a whole model: its result is the "
                              "adapter.gguf the run writes");
    auto model = make_language_model(ModelConfig::from_json(saved.at("model")), 0);
    // A QAT run's checkpoint: attach first so its factors and EMA load, export as its run does.
    if (auto qat = read_checkpoint_qat(a.run_dir)) {
      if (a.live_weights) qat->ema_decay = 0;  // the EMA is then neither loaded nor used
      model->attach_qat(*qat);
    }
    load_checkpoint(a.run_dir, *model, nullptr);
    ExportOptions e{*type, a.tokenizer, a.name};
    prepare_qat_export(*model, e);
    export_gguf(*model, e, a.out);
    std::printf("wrote %s\n", a.out.c_str());
  });
}

struct SftArgs {
  SftOptions o;
  std::string type = "f32";
  QatArgs qat;
};

// The options SFT and adapter training share: data, run folder, schedule, export type.
void add_finetune_options(CLI::App* cmd, SftArgs& a) {
  SftOptions& o = a.o;
  cmd->add_option("--base", o.base, "GGUF model to start from")->required();
  cmd->add_option("--data", o.data,
                  "Folder written by `afm data sft` (train.sft, val.sft); --data and/or --shards");
  cmd->add_option("--shards", o.shards,
                  "Folder of `afm data shards` (pretraining text, the base's tokenizer): alone, "
                  "or mixed into every micro-batch with --data")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--sft-share", o.sft_share,
                  "With --shards and --data: share of each micro-batch's rows from conversations")
      ->capture_default_str()->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--out", o.out_dir, "Run folder (checkpoints, log.jsonl, the exported files)")
      ->required();
  cmd->add_option("--seq-len", o.seq_len, "Positions per packed row")
      ->capture_default_str()->check(CLI::Range(int64_t{2}, int64_t{1} << 20));
  cmd->add_option("--steps", o.optim.steps,
                  "Optimiser steps (0: evaluate and write the starting point, e.g. an "
                  "--svd-init adapter before recovery training)")
      ->capture_default_str()->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  cmd->add_option("--batch-size", o.optim.batch_size, "Packed rows per micro-batch")
      ->capture_default_str()->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd->add_option("--grad-accum", o.optim.grad_accum, "Micro-batches per step")
      ->capture_default_str()->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd->add_option("--lr", o.optim.lr, "Peak learning rate")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--min-lr", o.optim.min_lr, "Learning rate at the end of the cosine")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--warmup", o.optim.warmup_steps, "Warmup steps")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--weight-decay", o.optim.weight_decay, "AdamW weight decay")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--eval-every", o.eval_every, "Steps between held-out evaluations (0: end only)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--eval-batches", o.eval_batches, "At most this many held-out batches")
      ->capture_default_str()->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd->add_option("--log-every", o.log_every, "Steps between log records")
      ->capture_default_str()->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  cmd->add_option("--checkpoint-every", o.checkpoint_every, "Steps between checkpoints")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", o.seed, "Seed of the packing, the batches (and LoRA's A)")
      ->capture_default_str();
  add_run_options(cmd, o.run);
}

gguf::TensorType tensor_type_option(const std::string& flag, const std::string& name) {
  auto type = gguf::tensor_type_from_name(name);
  if (!type) throw_error(ErrorCode::kInvalidArgument, "unknown " + flag + " " + name);
  return *type;
}

void add_sft(CLI::App& app, SftArgs& a) {
  CLI::App* cmd = app.add_subcommand(
      "sft", "Fine-tune a GGUF model on conversations rendered by `afm data sft` (loss on "
             "assistant tokens only)");
  SftOptions& o = a.o;
  // Fine-tuning defaults: a small constant-ish learning rate after a short warmup.
  o.optim.lr = 1e-4, o.optim.min_lr = 1e-5, o.optim.warmup_steps = 20, o.optim.steps = 300;
  o.optim.weight_decay = 0.0;
  add_finetune_options(cmd, a);
  cmd->add_option("--type", a.type, "Tensor type of the exported model: f32, f16, bf16, q8_0, q4_0")
      ->capture_default_str();
  add_qat_options(cmd, a.qat);
  cmd->callback([&a] {
    a.o.export_type = tensor_type_option("--type", a.type);
    a.o.qat = a.qat.spec();
    const SftResult r = run_sft(a.o);
    std::printf("wrote %s (val loss %.4f)\n", r.model_path.c_str(), r.run.val_loss);
  });
}

struct AdapterArgs {
  SftArgs sft;
  afm::train::LoraSpec lora;
  std::string targets, adapter_type = "f32";
};

void add_adapter(CLI::App& app, AdapterArgs& a) {
  CLI::App* cmd = app.add_subcommand(
      "adapter", "Train a LoRA adapter on a frozen GGUF base with conversations rendered by "
                 "`afm data sft` (writes <out>/adapter.gguf, docs/adapters.md)");
  SftOptions& o = a.sft.o;
  // LoRA trains few parameters from B = 0: a larger learning rate than full fine-tuning.
  o.optim.lr = 1e-3, o.optim.min_lr = 1e-4, o.optim.warmup_steps = 20, o.optim.steps = 300;
  o.optim.weight_decay = 0.0;
  add_finetune_options(cmd, a.sft);
  cmd->add_option("--rank", a.lora.rank, "LoRA rank")
      ->capture_default_str()->check(CLI::Range(int64_t{1}, int64_t{4096}));
  cmd->add_option("--alpha", a.lora.alpha, "LoRA alpha (the branch is scaled by alpha / rank)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--dropout", a.lora.dropout, "Dropout on the branch's input while training")
      ->capture_default_str()->check(CLI::Range(0.0, 0.99));
  cmd->add_option("--targets", a.targets,
                  "Comma-separated weight kinds to adapt, e.g. attn_q,attn_v (default: every "
                  "attention and feed-forward projection)");
  cmd->add_option("--adapter-type", a.adapter_type, "Type of A and B in the file: f32 or f16")
      ->capture_default_str()->check(CLI::IsMember({"f32", "f16"}));
  cmd->add_option("--svd-init", o.lora_init_from_svd,
                  "Start each branch from the top singular directions (rank --rank) of the same "
                  "tensor in this GGUF, the uncompressed model whose `afm-train svd-split` "
                  "residual --base holds (quality recovery after ASTC, docs/compression.md)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--merged", o.merged, "Also write <out>/model.gguf with the adapter folded in");
  cmd->add_option("--type", a.sft.type, "Tensor type of the merged model (--merged)")
      ->capture_default_str();
  cmd->callback([&a] {
    SftOptions& o = a.sft.o;
    o.export_type = tensor_type_option("--type", a.sft.type);
    o.adapter_type = tensor_type_option("--adapter-type", a.adapter_type);
    a.lora.targets = split_commas(a.targets);
    o.lora = a.lora;
    const SftResult r = run_sft(o);
    if (!r.adapter_path.empty())
      std::printf("wrote %s (%lld tensors adapted, val loss %.4f)\n", r.adapter_path.c_str(),
                  static_cast<long long>(r.adapted_tensors), r.run.val_loss);
    if (!r.model_path.empty()) std::printf("wrote %s\n", r.model_path.c_str());
  });
}

}  // namespace

// Re-executes this program once with the environment the CPU setup asks for (cpu_setup.h:
// variables the OpenMP runtime and OpenBLAS read only when they load). Returns when there is
// nothing to set, or when exec fails (the run goes on as it is).
void reexec_with_cpu_environment(char** argv) {
  const auto env = process_environment_for_cpu();
  if (env.empty()) return;
  for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), /*overwrite=*/0);
  execv("/proc/self/exe", argv);
}

int main(int argc, char** argv) {
  reexec_with_cpu_environment(argv);
  CLI::App app{"afm-train: train AFM-style models with libtorch"};
  app.require_subcommand(1);
  PretrainArgs pretrain;
  pretrain.argv = argv;
  ExportArgs export_args;
  add_pretrain(app, pretrain);
  add_export(app, export_args);
  SftArgs sft;
  add_sft(app, sft);
  AdapterArgs adapter;
  add_adapter(app, adapter);
  add_draft_command(app);
  add_svd_split_command(app);
  add_expand_command(app);
  int rloo_status = 0;
#ifdef AFM_TRAIN_WITH_RL
  add_rloo_commands(app, argc, argv, rloo_status);
  add_reward_command(app);
#endif
  try {
    app.parse(argc, argv);
    if (pretrain.launcher_status != 0) return pretrain.launcher_status;
    if (rloo_status != 0) return rloo_status;
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "afm-train: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
