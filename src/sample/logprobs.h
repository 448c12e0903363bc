// Log-probabilities of sampled tokens, as OpenAI's `logprobs` / `top_logprobs` report them and
// as RL needs them for the behaviour policy: the log-softmax of the model's raw logits (before
// temperature, penalties and grammar masks), at the chosen token and at the most likely ones.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace afm::sample {

struct TokenLogprob {
  int32_t token = -1;
  float logprob = 0.0f;
};

struct SampledLogprobs {
  TokenLogprob chosen;
  std::vector<TokenLogprob> top;  // the top_n most likely, highest first (ties: lower id first)
};

// logits: the full row for one position; token in [0, logits.size()); top_n >= 0. Computed in
// double; -inf logits get -inf log-probabilities.
SampledLogprobs logprobs_at(std::span<const float> logits, int32_t token, int top_n);

}  // namespace afm::sample
