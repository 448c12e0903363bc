// The reward model's objective (report section 5.1; docs/rl.md "Reward model"): the pairwise
// preference loss on the scores of chosen and rejected replies, plus single-sided grading as a
// regularizer: where a reply carries an absolute grade g in [0, 1], the logistic of its score
// is pulled towards g by binary cross-entropy.
//
// Contract (P pairs; scores are raw, unbounded):
//   pairwise = mean_p  -log sigmoid(chosen_p - rejected_p)
//   graded   = mean over graded replies of  BCE(sigmoid(score), grade)   (0 when none graded)
//   loss     = pairwise + grade_weight x graded
// `grades` (P, 2) float: column 0 the chosen reply's, column 1 the rejected's, NaN where a
// reply has no grade. Errors: Error(kInvalidArgument) naming a tensor of the wrong shape.
#pragma once

#include <torch/torch.h>

namespace afm::train {

struct RewardLossTerms {
  torch::Tensor loss;  // scalar, differentiable in the scores
  double pairwise = 0, graded = 0;
  double accuracy = 0;  // share of pairs with chosen > rejected
  double margin = 0;    // mean chosen - rejected
};

RewardLossTerms reward_loss(const torch::Tensor& chosen, const torch::Tensor& rejected,
                            const torch::Tensor& grades, double grade_weight);

}  // namespace afm::train
