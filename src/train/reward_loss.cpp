#include "train/reward_loss.h"

#include "base/error.h"

namespace afm::train {

RewardLossTerms reward_loss(const torch::Tensor& chosen, const torch::Tensor& rejected,
                            const torch::Tensor& grades, double grade_weight) {
  if (!chosen.defined() || chosen.dim() != 1 || !rejected.defined() ||
      rejected.sizes() != chosen.sizes())
    throw_error(ErrorCode::kInvalidArgument, "reward_loss: chosen and rejected must be (pairs)");
  if (!grades.defined() || grades.dim() != 2 || grades.size(0) != chosen.size(0) ||
      grades.size(1) != 2)
    throw_error(ErrorCode::kInvalidArgument, "reward_loss: grades must be (pairs, 2)");
  RewardLossTerms t;
  const torch::Tensor diff = chosen - rejected;
  const torch::Tensor pairwise = -torch::nn::functional::logsigmoid(diff).mean();
  const torch::Tensor scores = torch::stack({chosen, rejected}, 1);  // (P, 2)
  const torch::Tensor g = grades.to(scores.dtype());
  const torch::Tensor graded_mask = ~torch::isnan(g);
  torch::Tensor graded = torch::zeros({}, scores.options());
  if (graded_mask.any().item<bool>()) {
    const torch::Tensor s = scores.masked_select(graded_mask);
    const torch::Tensor target = g.masked_select(graded_mask);
    graded = torch::binary_cross_entropy_with_logits(s, target);
  }
  t.loss = pairwise + grade_weight * graded;
  t.pairwise = pairwise.item<double>();
  t.graded = graded.item<double>();
  t.accuracy = (diff > 0).to(torch::kFloat64).mean().item<double>();
  t.margin = diff.to(torch::kFloat64).mean().item<double>();
  return t;
}

}  // namespace afm::train
