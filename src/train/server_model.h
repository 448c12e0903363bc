// afm-server for training: Parallel-Track Mixture of Experts. T tracks of block_count layers;
// every track block of D layers starts from the same state and the T results are averaged at
// the block boundary. Layers alternate local (sliding window, RoPE) and global (NoPE) attention
// per global_every; every moe_every-th layer's feed-forward is a top-k mixture of experts with
// a softmax router (docs/gguf.md "afm-server" is the specification).
#pragma once

#include <vector>

#include "train/language_model.h"

namespace afm::train {

class ServerModel : public LanguageModel {
 public:
  explicit ServerModel(ModelConfig config);
  torch::Tensor hidden(const torch::Tensor& tokens, const Packing& packing = {}) override;
  torch::Tensor aux_loss() const override { return aux_loss_; }

 private:
  struct Experts {
    torch::Tensor norm;
    Weight router;    // (E, d)
    Weight gate, up;  // (E, F, d)
    Weight down;      // (E, d, F)
  };
  struct Layer {
    AttentionParams attn;
    FfnParams ffn;    // dense layers
    Experts experts;  // MoE layers
  };
  Experts add_experts(const std::string& prefix);
  // `rope`: the table for this forward's positions; `same_segment`: packed rows' mask.
  torch::Tensor layer_forward(const torch::Tensor& x, const Layer& l, int64_t n,
                              const RopeTable& rope, const torch::Tensor& same_segment);
  torch::Tensor experts_forward(const torch::Tensor& xn, const Experts& e);

  std::vector<std::vector<Layer>> tracks_;  // [track][layer]
  RopeTable rope_;
  torch::Tensor aux_loss_;
};

}  // namespace afm::train
