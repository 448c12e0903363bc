// Depth growth of a trained model by block expansion (after LLaMA Pro, Wu et al. 2024): each
// chosen layer gets a copy inserted right before it whose output projections (attn_output and
// ffn_down) are zero. A layer with zero output projections adds nothing to the residual stream,
// so the grown model computes exactly the function of the model it came from, and further
// training starts from everything the small model learned rather than from random weights.
//
// Why the copy goes before its original: on afm-device the Block-2 layers attend to the K/V
// that the last Block-1 layer computes from its input. With the identity copy in front, the
// original last layer still sees the residual it saw before and computes the same K/V.
//
// Contract:
// - `copied_layers` lists layers of the base (each once, in 0 .. block_count-1, any order).
//   Layer l of the base becomes layer l + (copies before l) of the grown model, its copy the
//   layer just before it. On afm-device the copy of a Block-1 layer joins Block 1 (with K/V
//   projections) and the copy of a Block-2 layer joins Block 2.
// - Architectures: llama and afm-device. afm-server (tracks, MoE and local/global layers by
//   position) throws Error(kUnsupported); an empty, repeated or out-of-range layer list throws
//   Error(kInvalidArgument) naming the value. The base must carry no LoRA or QAT state.
// - The grown model is float32 on the CPU; its forward equals the base's up to float rounding.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "train/language_model.h"
#include "train/model_config.h"

namespace afm::train {

// Where each layer of the grown model comes from.
struct ExpansionPlan {
  ModelConfig config;                 // the grown model's shape
  std::vector<int64_t> source_layer;  // per grown layer: the base layer it copies
  std::vector<bool> identity_copy;    // per grown layer: a new copy with zero outputs
};

ExpansionPlan plan_block_expansion(const ModelConfig& base, std::vector<int64_t> copied_layers);

std::shared_ptr<LanguageModel> expand_blocks(const LanguageModel& base,
                                             const std::vector<int64_t>& copied_layers);

}  // namespace afm::train
