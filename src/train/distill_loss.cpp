#include "train/distill_loss.h"

#include <algorithm>

#include "base/error.h"

namespace afm::train {
namespace {

double ratio(const torch::Tensor& sum, int64_t count) {
  return count > 0 ? sum.item<double>() / static_cast<double>(count) : 0.0;
}

}  // namespace

torch::Tensor DistillTerms::loss(double temperature, double ce_weight) const {
  torch::Tensor total = kl_sum * (temperature * temperature / std::max<int64_t>(1, positions));
  if (ce_weight > 0 && targets > 0) total = total + ce_sum * (ce_weight / targets);
  return total;
}

double DistillTerms::kl() const { return ratio(kl_sum.detach(), positions); }
double DistillTerms::ce() const { return ratio(ce_sum.detach(), targets); }
double DistillTerms::agreement() const { return ratio(agree_sum, positions); }
double DistillTerms::target_agreement() const { return ratio(agree_target_sum, targets); }

DistillTerms distill_terms(const torch::Tensor& student_logits, const torch::Tensor& teacher_logits,
                           const torch::Tensor& valid, const torch::Tensor& targets,
                           double temperature) {
  AFM_CHECK(temperature > 0);
  const int64_t vocab = student_logits.size(-1);
  AFM_CHECK(teacher_logits.size(-1) == vocab);
  const torch::Tensor keep = valid.reshape({-1}).to(torch::kBool);
  // Only the valid rows enter the softmaxes: padding costs nothing and adds nothing. Rows
  // without padding (pretraining windows) skip the copy.
  const bool all = keep.all().item<bool>();
  auto rows = [&](const torch::Tensor& logits) {
    const torch::Tensor flat = logits.reshape({-1, vocab});
    return (all ? flat : flat.index({keep})).to(torch::kFloat32);
  };
  const torch::Tensor s = rows(student_logits), t = rows(teacher_logits.detach());
  const torch::Tensor log_q = torch::log_softmax(s / temperature, -1);
  const torch::Tensor log_p = torch::log_softmax(t / temperature, -1);
  DistillTerms out;
  out.kl_sum = (log_p.exp() * (log_p - log_q)).sum();
  const torch::Tensor agree = s.detach().argmax(-1) == t.argmax(-1);
  out.agree_sum = agree.sum().to(torch::kFloat64);
  out.positions = s.size(0);

  const torch::Tensor tgt = all ? targets.reshape({-1}) : targets.reshape({-1}).index({keep});
  const torch::Tensor has = tgt != -100;
  out.targets = has.sum().item<int64_t>();
  out.agree_target_sum = agree.logical_and(has).sum().to(torch::kFloat64);
  out.ce_sum = out.targets > 0
                   ? torch::nn::functional::cross_entropy(
                         s.index({has}), tgt.index({has}),
                         torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                   : torch::zeros({}, s.options());
  return out;
}

}  // namespace afm::train
