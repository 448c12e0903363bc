// The optimisation loop pretraining and fine-tuning share: AdamW with decoupled weight decay,
// warmup + cosine schedule, gradient accumulation and clipping, bf16 autocast (CUDA, or CPUs
// with AVX512-BF16), held-out loss every eval_every steps, JSONL logs and a progress bar,
// atomic checkpoints with exact resume, data parallelism over processes (data_parallel.h).
// What differs between the two is where batches come from (BatchSource) and where the model
// starts (a seeded initialisation or a GGUF file); distillation also brings its own loss and
// held-out metrics (objective.h).
//
// Contract: run_training() resumes from <out_dir>/checkpoint.pt when it exists (unless
// `fresh`), so a killed run continues with the same batches and the same next-step loss. A
// non-finite loss stops the run with afm::Error(kInternal) naming the step, leaving the last
// checkpoint untouched. Log records go to <out_dir>/log.jsonl (appended) and, with
// `json_stdout`, to stdout.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "train/language_model.h"
#include "train/objective.h"
#include "train/torch_ops.h"
#include "train/trainer.h"

namespace afm::train {

// One micro-batch: the model reads `input` (B, T) and is trained to predict `target` (B, T);
// target -100 marks positions without loss (cross-entropy's ignore index).
struct TrainBatch {
  torch::Tensor input, target;
  Packing packing;  // several documents per row (fine-tuning); empty for pretraining windows
};

class BatchSource {
 public:
  virtual ~BatchSource() = default;
  // Global micro-batch `micro` of optimiser step `step`; a pure function of both, so resumed
  // and data-parallel runs see the batches of one uninterrupted process.
  virtual TrainBatch train(int64_t step, int64_t micro) const = 0;
  // Held-out batch i of eval_count(), the same at every evaluation.
  virtual int64_t eval_count() const = 0;
  virtual TrainBatch eval(int64_t i) const = 0;
  // Positions per micro-batch (B x T), for tokens/s and MFU.
  virtual int64_t tokens_per_micro_batch() const = 0;
  // Fields for the run's first log record (sizes of the splits ...).
  virtual nlohmann::json describe() const = 0;
};

// Builds the model to train (called once threads are configured, before any other tensor work).
using ModelFactory = std::function<std::shared_ptr<LanguageModel>()>;

// `config` supplies the optimiser, schedule, evaluation, logging and checkpoint settings and
// the model config written to checkpoints; the model itself comes from `make_model`. Without an
// `objective` the loss is language_model_loss() and evaluations log val_loss and val_ppl.
RunResult run_training(const TrainConfig& config, const RunOptions& options,
                       const ModelFactory& make_model, const BatchSource& data,
                       Objective* objective = nullptr);

// Mean cross-entropy of the batch's targets (ignoring -100) under `model`.
torch::Tensor language_model_loss(LanguageModel& model, const TrainBatch& batch);

}  // namespace afm::train
