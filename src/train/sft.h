// `afm-train sft`: supervised fine-tuning of a GGUF model on conversations rendered by
// `afm data sft` (sft_data.h), with the shared training loop (training_loop.h), then export to
// GGUF. (`afm train sft --data F.jsonl` renders and runs this in one command.)
//
// The model starts from the base GGUF's weights (dequantized to f32, gguf_import.h); the result
// is written as <out>/model.gguf with the base's tokenizer and chat template. Resume, logs,
// progress and checkpoints are the training loop's.
//
// With `lora` set (`afm-train adapter`), the base stays frozen and only LoRA branches train
// (language_model.h attach_lora; A seeded by `seed`); the result is <out>/adapter.gguf
// (lora_export.h), plus <out>/model.gguf with the branches folded in when `merged`.
// Checkpoints then hold the branches and their optimiser state only.
//
// Errors: afm::Error from the data (FILE:LINE), the base model or the run; kInvalidArgument for
// QAT together with LoRA.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "gguf/types.h"
#include "train/language_model.h"
#include "train/trainer.h"
#include "train/train_config.h"

namespace afm::train {

struct SftOptions {
  std::string base;        // GGUF model to start from
  std::string data;        // folder written by `afm data sft`; may be empty with `shards`
  // Folder of `afm data shards` (pretraining text): with `data` too, each micro-batch takes
  // round(batch x sft_share) conversation rows and the rest text windows (draft_data.h) --
  // the base's own data recipe, as the report trains its quality-recovery adapters.
  std::string shards;
  double sft_share = 0.5;
  std::string out_dir;     // run folder: checkpoints, log.jsonl, model.gguf
  int64_t seq_len = 512;   // positions per packed row (at most the model's context)
  OptimConfig optim;       // defaults set by the CLI for fine-tuning
  int64_t eval_every = 50, eval_batches = 8, log_every = 10, checkpoint_every = 200;
  uint64_t seed = 1;
  gguf::TensorType export_type = gguf::TensorType::kF32;
  RunOptions run;
  std::optional<LoraSpec> lora;  // adapter training
  // Adapter training: start every branch from the principal part (svd_split.h) of the same
  // tensor in this GGUF, the uncompressed model whose SVD residual `base` holds: recovery
  // training after `afm-train svd-split` and `afm quantize --type astc6x6`.
  std::string lora_init_from_svd;
  bool merged = false;           // adapter training: also write the merged model
  gguf::TensorType adapter_type = gguf::TensorType::kF32;  // f32 or f16
  // Quantization-aware training (`afm-train sft --qat`): the model trains through fake
  // quantization (language_model.h attach_qat) and is exported from its EMA as q2_b matrices
  // with the learned factors, the embedding as q4_0 (export_type for anything else).
  std::optional<QatSpec> qat;
};

struct SftResult {
  RunResult run;
  std::string model_path;    // the exported GGUF; empty for an adapter run without `merged`
  std::string adapter_path;  // adapter training: the adapter file
  int64_t adapted_tensors = 0;
};

SftResult run_sft(const SftOptions& options);

}  // namespace afm::train
