// Writes a training model's LoRA branches (LanguageModel::attach_lora) as an adapter file for
// the GGUF they were trained on: llama.cpp's layout plus the base's data-section SHA-256
// (docs/adapters.md), through the runtime's model::LoraWriter, so the file is checked against
// the base exactly as the runtime will check it when loading.
//
// Contract: `base_gguf` must be the file the model was imported from (each pair is checked
// against its tensor there); A and B are stored as `type` (f32 or f16), with
// adapter.lora.alpha = the spec's alpha. Atomic write; afm::Error(kInvalidArgument) when the
// model has no branches, the writer's and reader's errors otherwise.
#pragma once

#include <string>

#include "gguf/types.h"
#include "train/language_model.h"

namespace afm::train {

struct AdapterExportOptions {
  gguf::TensorType type = gguf::TensorType::kF32;
  std::string name = "afm-adapter";  // general.name
};

// Returns the number of adapted tensors written.
int64_t export_lora_adapter(const LanguageModel& model, const std::string& base_gguf,
                            const AdapterExportOptions& options, const std::string& out_path);

}  // namespace afm::train
