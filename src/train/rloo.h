// The RLOO objective (report section 5.2; docs/rl.md): k sampled completions per prompt, each
// with a task reward; the reward is lowered by beta x the sequence's KL to a frozen reference,
// the baseline of a sample is the mean reward of the other samples of its prompt (leave one
// out), and the policy gradient runs over the sampled completion tokens, reweighted by the
// truncated importance ratio between the current policy and the one that sampled them (an
// asynchronous generator may lag the updater by a few versions).
//
// Contract (B samples, T positions; `mask` is 1 on completion tokens):
//   kl_i   = sum_t mask (logp_it - ref_it)                     (detached; k1 estimator)
//   R'_i   = R_i - beta kl_i
//   A_i    = R'_i - mean_{j != i, group_j == group_i} R'_j      (0 for a group of one)
//   w_it   = min(exp(logp_it - behaviour_it), max_ratio)       (detached)
//   loss   = -(1 / B) sum_i A_i sum_t mask w_it logp_it
// `logprobs` carries the gradient; everything else is data. Throws afm::Error
// (kInvalidArgument) naming the tensor whose shape does not fit.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "train/language_model.h"

namespace afm::train {

struct RlooOptions {
  double kl_beta = 0.05;
  double max_ratio = 2.0;  // truncation of the importance ratio
};

struct RlooTerms {
  torch::Tensor loss;        // scalar, differentiable in logprobs
  torch::Tensor advantages;  // (B)
  torch::Tensor kl;          // (B)
  double mean_reward = 0, mean_kl = 0, mean_ratio = 0, truncated_share = 0;
};

// Leave-one-out advantages of `rewards` (B) within groups (B ids).
torch::Tensor leave_one_out_advantages(const torch::Tensor& rewards, const torch::Tensor& groups);

RlooTerms rloo_loss(const torch::Tensor& logprobs, const torch::Tensor& ref_logprobs,
                    const torch::Tensor& behaviour_logprobs, const torch::Tensor& mask,
                    const torch::Tensor& rewards, const torch::Tensor& groups,
                    const RlooOptions& options);

// log p(tokens[:, t+1] | tokens[:, :t+1]) under `model` for t < T-1: (B, T-1) float32, the
// log-probability of each next token (what the policy-gradient terms weight).
torch::Tensor next_token_logprobs(LanguageModel& model, const torch::Tensor& tokens);

}  // namespace afm::train
