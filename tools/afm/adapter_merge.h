// Folding a LoRA adapter into its base model: row o of each adapted W gains
// s · sum_r B[o][r] · A[r] (s = alpha / rank x scale), written as a new GGUF in each tensor's own type (q8_0 / q4_0 are
// re-quantised with the project's quantisers), every other tensor and all metadata copied.
// Also random adapters for tests and benchmarks.
//
// Errors: afm::Error from loading (model/lora.h) and writing (atomic: the target is untouched
// on failure); Error(kUnsupported) for a base tensor type the merge cannot re-encode.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gguf/reader.h"
#include "model/lora.h"

namespace afm::cli {

// Writes base + scale-weighted adapter to out_path; returns the number of tensors changed.
int64_t merge_adapter(const gguf::File& base, const model::LoraAdapter& adapter, float scale,
                      const std::string& out_path);

struct RandomAdapterOptions {
  int64_t rank = 32;
  float alpha = 32;
  uint64_t seed = 1;
  float std_b = 0.05f;                 // B ~ N(0, std_b); A ~ N(0, 1 / sqrt(in))
  std::vector<std::string> targets;    // short names (attn_q, ffn_down, output ...); empty: all
  gguf::TensorType type = gguf::TensorType::kF32;
};

// Writes a seeded random adapter for `base`; returns the number of adapted tensors.
int64_t write_random_adapter(const gguf::File& base, const RandomAdapterOptions& options,
                             const std::string& out_path);

}  // namespace afm::cli
