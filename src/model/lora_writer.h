// Writes LoRA adapter files (docs/adapters.md): llama.cpp's layout plus the SHA-256 of the base
// model's tensor data, so afm refuses an adapter on the wrong base while llama.cpp still loads
// it. Used by `afm adapter` and by adapter training.
//
// Contract: pairs are checked against the base file when added (Error(kNotFound) for a tensor
// the base lacks, kUnsupported for one the runtime does not adapt, kInvalidArgument for sizes
// that do not match); write() is atomic (temporary file, fsync, rename): on error the target
// is untouched. Not thread-safe; the base File must outlive the writer.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gguf/reader.h"
#include "gguf/types.h"
#include "gguf/writer.h"

namespace afm::model {

class LoraWriter {
 public:
  // alpha: adapter.lora.alpha (the runtime scale is alpha / rank x the user's scale).
  LoraWriter(const gguf::File& base, float alpha);

  // For base tensor `name` of GGUF shape [in, out] (or [in, out, n] stacked): a holds
  // n x (rank, in) and b n x (out, rank) floats, row-major; stored as `type` (f32 or f16).
  void add(const std::string& name, int64_t rank, std::span<const float> a,
           std::span<const float> b, gguf::TensorType type = gguf::TensorType::kF32);
  // Extra metadata (general.name, training details ...).
  void set(std::string key, gguf::Value value) { writer_.set(std::move(key), std::move(value)); }

  void write(const std::string& path) const { writer_.write(path); }

 private:
  const gguf::File& base_;
  gguf::Writer writer_;
};

}  // namespace afm::model
