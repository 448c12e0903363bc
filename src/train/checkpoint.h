// Training checkpoints: the model's trainable parameters (all of them, or only the LoRA factors
// of adapter training: the frozen base comes from its GGUF again; with QAT also its factors,
// settings and the EMA of the weights), the AdamW state and the next step, in one
// libtorch archive `<dir>/checkpoint.pt`, plus `<dir>/checkpoint.json` (step, config, loss) for
// people and scripts.
//
// Contract: save_checkpoint() writes to a temporary name and renames, so after a crash or a
// failed write the previous checkpoint is intact; it throws afm::Error(kIo) naming the path.
// load_checkpoint() checks that every trainable parameter is present with the model's shape and throws
// afm::Error(kFormat) naming the first mismatch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>
#include <torch/torch.h>

#include "train/adamw.h"
#include "train/language_model.h"

namespace afm::train {

struct CheckpointInfo {
  int64_t next_step = 0;
  double loss = 0;
};

std::string checkpoint_path(const std::string& dir);
bool checkpoint_exists(const std::string& dir);

void save_checkpoint(const std::string& dir, LanguageModel& model, const AdamW& opt,
                     const CheckpointInfo& info, const nlohmann::json& config);

// The training configuration saved with the checkpoint (checkpoint.json's "config").
nlohmann::json read_checkpoint_config(const std::string& dir);

// Loads parameters (and the optimiser state when `opt` is not null) onto the model's device.
CheckpointInfo load_checkpoint(const std::string& dir, LanguageModel& model, AdamW* opt);

// The QAT settings a checkpoint was saved with (nullopt for a run without QAT): a model to
// load it into attaches QAT with them first, so that the factors and the EMA load too.
std::optional<QatSpec> read_checkpoint_qat(const std::string& dir);

}  // namespace afm::train
