// The report's step before ASTC on the server model (section 6, after PiSSA, Meng et al. 2024):
// each adapted matrix's most significant singular directions move into a LoRA branch, the
// residual stays in the base, and only the base is compressed; recovery training then starts
// the adapter from those directions (docs/compression.md, "SVD + recovery LoRA").
#pragma once

#include <cstdint>
#include <string>

#include <torch/torch.h>

#include "train/language_model.h"

namespace afm::train {

// The rank-`rank` truncated SVD of w (out, in), or of each matrix of a stack (E, out, in), as
// factors b · a with a = S^1/2 Vᵀ (rank, in) and b = U S^1/2 (out, rank), both float32.
// Throws Error(kInvalidArgument) for a rank above min(out, in).
struct LowRank {
  torch::Tensor a, b;
};
LowRank principal_part(const torch::Tensor& w, int64_t rank);

// Subtracts from every weight `spec` targets its rank-`spec.rank` principal part: the base
// left to compress. The model must have no adapter attached; returns the matrices changed.
int64_t subtract_principal_parts(LanguageModel& model, const LoraSpec& spec);

// Sets every attached LoRA branch to the principal part (the branch's rank) of the same tensor
// in the GGUF file `original`, divided evenly between A and B for the branch's scale, so that
// base + branch = compressed residual + principal part. Throws Error(kFormat) when `original`
// lacks a tensor or has another shape.
void init_lora_from_principal_parts(LanguageModel& model, const std::string& original);

}  // namespace afm::train
