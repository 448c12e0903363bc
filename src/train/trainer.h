// The pretraining loop: AdamW with decoupled weight decay on matrices, warmup + cosine
// schedule, gradient accumulation and clipping, bf16 autocast on CUDA, held-out loss every
// eval_every steps, JSONL logs, atomic checkpoints with exact resume, and data parallelism
// over processes (ProcessGroup, see data_parallel.h).
//
// Contract: run_pretraining() resumes from <out_dir>/checkpoint.pt when it exists (unless
// `fresh`), so a killed run continues with the same batches and the same next-step loss. A
// non-finite loss stops the run with afm::Error(kInternal) naming the step, leaving the last
// checkpoint untouched. Log records go to <out_dir>/log.jsonl (appended) and, with
// `json_stdout`, to stdout.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "train/cpu_setup.h"
#include "train/language_model.h"
#include "train/train_config.h"

namespace afm::train {

struct RunOptions {
  std::string device = "cpu";  // "cpu", "cuda", "cuda:N"
  bool fresh = false;          // ignore an existing checkpoint
  int64_t stop_after = 0;      // > 0: stop (with a checkpoint) after this many steps this run
  double peak_tflops = 0;      // for MFU; 0: 989 on CUDA (H100/H200 dense bf16), none on CPU
  bool json_stdout = false;
  int threads = 0;             // CPU compute threads (cpu_setup.h); 0: the physical cores
  CpuBf16 cpu_bf16 = CpuBf16::kAuto;  // bf16 autocast on the CPU (cpu_setup.h)
};

struct RunResult {
  int64_t steps_done = 0;
  double last_loss = 0, val_loss = 0;
  double tokens_per_second = 0, mfu = 0;
};

// Where a pretraining run starts: a seeded initialisation (the default), or the weights of a
// GGUF model (`init_gguf`, whose shape replaces the config's), optionally trained through
// QAT (the report's QAT "follows the same training stages as the base model").
struct PretrainStart {
  std::string init_gguf;
  std::optional<QatSpec> qat;
};

RunResult run_pretraining(const TrainConfig& config, const RunOptions& options,
                          const PretrainStart& start = {});

}  // namespace afm::train
