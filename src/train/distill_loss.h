// The distillation loss of a draft model (draft.h): how far the student's next-token
// distribution is from a frozen teacher's, position by position.
//
//   KL_T = sum_v p_v (log p_v - log q_v),  p = softmax(teacher / T), q = softmax(student / T)
//   loss = T^2 * mean_valid(KL_T) + ce_weight * mean_targets(CE(student, target))
//
// T^2 keeps the gradient's scale independent of the temperature (Hinton et al.'s choice), so a
// learning rate tuned at T = 1 still fits. The terms are sums over positions with their counts,
// so held-out batches of different sizes add up exactly.
//
// Contract: logits are (N, V) (any leading shape is flattened), the student's differentiable;
// the teacher's are treated as constants (no gradient flows to them). `valid` (N) bool marks the
// positions to distil (padding excluded); `targets` (N) int64 are next tokens, -100 where there
// is none (cross-entropy's ignore index). Everything is computed in float32. temperature must be
// > 0 (AFM_CHECK: the CLI validates it).
#pragma once

#include <torch/torch.h>

namespace afm::train {

struct DistillTerms {
  torch::Tensor kl_sum;     // sum over valid positions of KL_T (scalar, differentiable)
  torch::Tensor ce_sum;     // sum over target positions of the student's cross-entropy
  torch::Tensor agree_sum;  // valid positions where argmax student == argmax teacher (detached)
  torch::Tensor agree_target_sum;  // the same over the positions with a target
  int64_t positions = 0;           // valid positions
  int64_t targets = 0;             // positions with a target

  // T^2 * mean KL + ce_weight * mean CE (a zero term when its count is zero).
  torch::Tensor loss(double temperature, double ce_weight) const;
  double kl() const;         // mean KL_T
  double ce() const;         // mean CE
  double agreement() const;  // share of valid positions whose greedy tokens agree
  // The same over target positions: in conversations the assistant's tokens, the only ones a
  // draft proposes in chat.
  double target_agreement() const;
};

DistillTerms distill_terms(const torch::Tensor& student_logits, const torch::Tensor& teacher_logits,
                           const torch::Tensor& valid, const torch::Tensor& targets,
                           double temperature);

}  // namespace afm::train
