// AdamW (decoupled weight decay) over lists of tensors with torch's multi-tensor `_foreach_`
// kernels: a step is a dozen kernel launches for the whole model instead of a dozen per
// parameter (libtorch's own torch::optim::AdamW steps one tensor at a time). The arithmetic is
// torch.optim.AdamW's: p *= 1 - lr*wd; m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g^2;
// p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps).
//
// Also the global-norm gradient clipping that goes with it.
//
// Contract: the state (m, v, step count) is saved under "adamw/..." keys of a libtorch archive,
// named by each parameter's GGUF name; load() throws afm::Error(kFormat) naming a missing or
// mis-shaped state tensor. Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "train/language_model.h"

namespace afm::train {

struct AdamWOptions {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.95, eps = 1e-8, weight_decay = 0.1;
};

class AdamW {
 public:
  // Parameters with NamedParameter::decay get `weight_decay`; the others none.
  AdamW(const std::vector<NamedParameter>& params, const AdamWOptions& options);

  void set_lr(double lr) { options_.lr = lr; }
  void zero_grad();
  void step();
  int64_t steps_taken() const { return step_; }

  void save(torch::serialize::OutputArchive& archive) const;
  void load(torch::serialize::InputArchive& archive);

 private:
  struct Group {
    std::vector<std::string> names;
    std::vector<torch::Tensor> params, exp_avg, exp_avg_sq;
    double weight_decay = 0;
  };
  void init_state();
  void step_group(Group& g, double bias1, double bias2);

  std::vector<Group> groups_;
  AdamWOptions options_;
  int64_t step_ = 0;
};

// Scales the gradients of `params` so their global L2 norm is at most max_norm (when
// max_norm > 0 and finite) and returns the norm before scaling (inf / nan when the gradients
// are not finite).
double clip_gradient_norm(const std::vector<torch::Tensor>& params, double max_norm);

}  // namespace afm::train
