// Writes a training model as a GGUF file the runtime (and, for `llama`, llama.cpp) loads: the
// hyper-parameter keys of docs/gguf.md for its architecture, every parameter under its GGUF
// name, and the `tokenizer.*` keys copied from a GGUF that holds the model's tokenizer.
//
// Contract: 1-D tensors stay f32; matrices are stored as `type` (f16 when a row is not a
// multiple of the type's block), except the QAT overrides below. The file is written atomically; errors throw afm::Error
// (kNotFound / kFormat for the tokenizer file, kInvalidArgument when its vocabulary size is
// not the model's, kIo for the write).
#pragma once

#include <cstdint>
#include <optional>
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
  // Quantization-aware training (LanguageModel::qat_factors): these tensors are written as
  // q2_b with their learned factor f (quantize_row_q2b), the values the training forward used.
  std::vector<std::pair<std::string, double>> q2b_factors;
  // The type of token_embd.weight when set (q4_0 after QAT with a 4-bit embedding).
  std::optional<gguf::TensorType> embedding_type;
};

void export_gguf(const LanguageModel& model, const ExportOptions& options,
                 const std::string& out_path);

// For a model trained with QAT: loads its EMA into the weights and sets `options` to write
// what the training forward used (its matrices as q2_b with their factors, the embedding as
// q4_0 when it was trained at 4 bits). No-op for other models.
void prepare_qat_export(LanguageModel& model, ExportOptions& options);

}  // namespace afm::train
