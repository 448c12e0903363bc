#include "train/lora_weight.h"

#include "train/fake_quant.h"
#include "train/torch_ops.h"

namespace afm::train {

torch::Tensor Weight::effective() const {
  const QuantSlot& q = *quant_;
  if (!q.attached()) return w_;
  return fake_quant_q2b(w_, scale_gradient(q.factor, q.gradient_scale));
}

torch::Tensor Weight::operator()(const torch::Tensor& x) const {
  torch::Tensor y = project(x, effective());
  const LoraBranch& l = *lora_;
  if (!l.attached() || !l.enabled) return y;
  const bool training = l.owner != nullptr && l.owner->is_training();
  const torch::Tensor xin = l.dropout > 0 ? torch::dropout(x, l.dropout, training) : x;
  return y + project(project(xin, l.a), l.b) * l.scale;
}

Weight Weight::expert(int64_t j) const {
  Weight e(w_[j]);
  const LoraBranch& l = *lora_;
  if (l.attached()) *e.lora_ = {l.a[j], l.b[j], l.scale, l.dropout, l.owner, l.enabled};
  *e.quant_ = *quant_;  // one factor per stacked tensor; the blocks are per row either way
  return e;
}

torch::Tensor swiglu(const torch::Tensor& x, const Weight& gate, const Weight& up,
                     const Weight& down) {
  return down(torch::silu(gate(x)) * up(x));
}

}  // namespace afm::train
