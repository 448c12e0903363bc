// Writes a training model as a GGUF file the runtime (and, for `llama`, llama.cpp) loads: the
// hyper-parameter keys of docs/gguf.md for its architecture, every parameter under its GGUF
// name, and the `tokenizer.*` keys copied from a GGUF that holds the model's tokenizer.
//
// Contract: 1-D tensors stay f32; matrices are stored as `type` (f16 when a row is not a
// multiple of the 32-value block). The file is written atomically; errors throw afm::Error
// (kNotFound / kFormat for the tokenizer file, kInvalidArgument when its vocabulary size is
// not the model's, kIo for the write).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gguf/types.h"
#include "train/language_model.h"

namespace afm::train {

struct ExportOptions {
  gguf::TensorType type = gguf::TensorType::kF32;
  std::string tokenizer_gguf;  // a GGUF with tokenizer.* keys; empty: no tokenizer keys
  std::string name = "afm";    // general.name
  // More metadata keys with u32 values (a reward model's afm.reward.score_token).
  std::vector<std::pair<std::string, uint32_t>> extra_u32;
};

void export_gguf(const LanguageModel& model, const ExportOptions& options,
                 const std::string& out_path);

}  // namespace afm::train
