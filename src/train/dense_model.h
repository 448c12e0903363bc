// Dense decoders for training: `llama` (RoPE on adjacent pairs, no QK norm; the export runs in
// llama.cpp too) and `afm-device` (QK norm after RoPE; layers from block1_layers on have no K/V
// projections and attend to the K/V of layer block1_layers-1, the report's KV-cache sharing).
// Both tie the output head to the embedding.
#pragma once

#include <vector>

#include "train/language_model.h"

namespace afm::train {

class DenseModel : public LanguageModel {
 public:
  explicit DenseModel(ModelConfig config);
  torch::Tensor hidden(const torch::Tensor& tokens, const Packing& packing = {}) override;

 private:
  struct Layer {
    AttentionParams attn;
    FfnParams ffn;
  };
  const RopeTable& rope_for(const torch::Device& device);

  std::vector<Layer> layers_;
  int64_t kv_owner_count_;  // layers with their own K/V
  RopeTable rope_;
};

}  // namespace afm::train
