// A projection weight of a training model that can carry a LoRA branch (adapter training,
// docs/adapters.md): y = x Wᵀ + s · (dropout(x) Aᵀ) Bᵀ, the function the runtime applies
// unmerged and llama.cpp applies, with s = alpha / rank.
//
// Contract: a Weight without a branch or QAT computes exactly project(x, W). The branch lives in a
// slot shared by every copy of the Weight, so the model attaches it after the layers are built
// (LanguageModel::attach_lora) and the layers' copies see it. Stacked expert weights (E, out,
// in) carry (E, rank, in) / (E, rank, out)ᵀ branches; expert(j) is slice j of both. Dropout
// applies only while the owning module is in training mode. Not thread-safe.
#pragma once

#include <memory>

#include <torch/torch.h>

namespace afm::train {

struct LoraBranch {
  torch::Tensor a, b;  // (rank, in) and (out, rank); stacked: (E, rank, in), (E, out, rank)
  double scale = 0;    // alpha / rank
  double dropout = 0;  // probability of zeroing an input value of the branch
  const torch::nn::Module* owner = nullptr;  // dropout while owner->is_training()
  bool enabled = true;  // false: the base weight alone (the frozen reference of RLOO)
  bool attached() const { return a.defined(); }
};

// Quantization-aware training (fake_quant.h): while `factor` is defined the weight computes
// with fake_quant_q2b(W, factor), the gradient of factor scaled by `gradient_scale`.
struct QuantSlot {
  torch::Tensor factor;  // scalar, learnable
  double gradient_scale = 1;
  bool attached() const { return factor.defined(); }
};

class Weight {
 public:
  Weight() = default;
  explicit Weight(torch::Tensor w)
      : w_(std::move(w)),
        lora_(std::make_shared<LoraBranch>()),
        quant_(std::make_shared<QuantSlot>()) {}

  bool defined() const { return w_.defined(); }
  const torch::Tensor& tensor() const { return w_; }
  LoraBranch& lora() const { return *lora_; }
  QuantSlot& quant() const { return *quant_; }
  // The matrix the forward pass uses: W, or its fake-quantized values under QAT.
  torch::Tensor effective() const;

  // x (..., in) -> (..., out).
  torch::Tensor operator()(const torch::Tensor& x) const;
  // Expert j of a stacked weight, with slice j of its branch.
  Weight expert(int64_t j) const;

 private:
  torch::Tensor w_;
  std::shared_ptr<LoraBranch> lora_;
  std::shared_ptr<QuantSlot> quant_;
};

// down(silu(gate x) * up x), each projection with its branch.
torch::Tensor swiglu(const torch::Tensor& x, const Weight& gate, const Weight& up,
                     const Weight& down);

}  // namespace afm::train
