// `afm-train draft`: distils a small draft model for speculative decoding from a base GGUF
// model (the teacher: imported with gguf_import.h, frozen, no gradient), with the shared
// training loop (training_loop.h) and a distillation objective (objective.h):
//
//   loss = T^2 KL(p_base,T || p_draft,T) + ce_weight CE(draft, next token)   (distill_loss.h)
//
// over every position of the batch, the teacher's logits computed in the same step. Data are
// shard windows and/or rendered conversations (draft_data.h). Held-out evaluations log val_kl
// (at T = 1, the distribution the runtime samples), val_ce, val_base_ce (the base's own CE on
// the same targets) and val_agreement: the share of positions where the draft's greedy token is
// the base's, which is what a greedy draft's acceptance rate follows.
//
// The draft (draft_model.h) is a dense llama or afm-device model of the base's vocabulary and
// context, started from the base's embedding, output norm and first layers where the shapes
// match. The result, <out>/model.gguf (written when the run reaches its last step), carries the
// base's tokenizer.* keys unchanged (the same tokens, merges, specials and chat template), so
// the runtime can check that draft and base share a vocabulary. Logs, progress, checkpoints
// (the draft's parameters only; the base is re-read from its GGUF), resume and --stop-after
// are the loop's.
//
// Errors: afm::Error naming the problem: a base without a tokenizer or whose tokenizer does not
// cover its vocabulary, a draft shape the base cannot take (draft_model.h), --seq-len beyond the
// base's context, data made for another vocabulary (draft_data.h), a temperature <= 0 or a
// negative CE weight (kInvalidArgument); the base's import errors (gguf_import.h).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "gguf/types.h"
#include "train/draft_model.h"
#include "train/train_config.h"
#include "train/trainer.h"

namespace afm::train {

struct DraftOptions {
  std::string base;        // the teacher GGUF
  std::string shards;      // `afm data shards` folder (the base's tokenizer); may be empty
  std::string data;        // `afm data sft` folder; may be empty (not both)
  double sft_share = 0.5;  // with both: share of each batch's rows from conversations
  std::string out_dir;     // checkpoints, log.jsonl, model.gguf
  DraftShape shape;
  DraftInit init = DraftInit::kBase;
  double temperature = 1.0, ce_weight = 0.0;
  int64_t seq_len = 256;
  OptimConfig optim;  // defaults set by the CLI
  int64_t eval_every = 50, eval_batches = 8, log_every = 10, checkpoint_every = 100;
  uint64_t seed = 1;
  gguf::TensorType export_type = gguf::TensorType::kQ8_0;
  std::string name = "afm-draft";  // general.name of the export
  RunOptions run;
};

struct DraftResult {
  RunResult run;
  ModelConfig config;          // the draft's
  int64_t copied_tensors = 0;  // tensors initialised from the base (before any resume)
  nlohmann::json evaluation;   // the last held-out record (val_kl, val_agreement, ...)
  std::string model_path;      // empty when the run stopped before its last step
};

DraftResult run_draft(const DraftOptions& options);

}  // namespace afm::train
