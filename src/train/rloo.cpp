#include "train/rloo.h"

#include "base/error.h"

namespace afm::train {
namespace {

void expect_shape(const torch::Tensor& t, at::IntArrayRef shape, const char* name) {
  if (!t.defined() || t.sizes() != shape)
    throw_error(ErrorCode::kInvalidArgument,
                std::string("rloo: ") + name + " has shape " +
                    (t.defined() ? c10::str(t.sizes()) : std::string("(undefined)")) +
                    ", expected " + c10::str(shape));
}

}  // namespace

torch::Tensor leave_one_out_advantages(const torch::Tensor& rewards, const torch::Tensor& groups) {
  const torch::Tensor r = rewards.to(torch::kFloat64);
  const torch::Tensor same = groups.unsqueeze(0) == groups.unsqueeze(1);  // (B, B)
  const torch::Tensor counts = same.sum(1).to(torch::kFloat64);           // group sizes
  const torch::Tensor sums = (same.to(torch::kFloat64) * r.unsqueeze(0)).sum(1);
  const torch::Tensor others = counts - 1;
  const torch::Tensor baseline = (sums - r) / others.clamp_min(1);
  return torch::where(others > 0, r - baseline, torch::zeros_like(r));
}

RlooTerms rloo_loss(const torch::Tensor& logprobs, const torch::Tensor& ref_logprobs,
                    const torch::Tensor& behaviour_logprobs, const torch::Tensor& mask,
                    const torch::Tensor& rewards, const torch::Tensor& groups,
                    const RlooOptions& o) {
  if (!logprobs.defined() || logprobs.dim() != 2)
    throw_error(ErrorCode::kInvalidArgument, "rloo: logprobs must be (samples, positions)");
  const int64_t b = logprobs.size(0);
  expect_shape(ref_logprobs, logprobs.sizes(), "ref_logprobs");
  expect_shape(behaviour_logprobs, logprobs.sizes(), "behaviour_logprobs");
  expect_shape(mask, logprobs.sizes(), "mask");
  expect_shape(rewards, {b}, "rewards");
  expect_shape(groups, {b}, "groups");

  RlooTerms t;
  const torch::Tensor m = mask.to(torch::kFloat32);
  const torch::Tensor lp = logprobs.to(torch::kFloat32);
  {
    torch::NoGradGuard no_grad;
    t.kl = ((lp.detach() - ref_logprobs.to(torch::kFloat32)) * m).sum(1).to(torch::kFloat64);
    const torch::Tensor shaped = rewards.to(torch::kFloat64) - o.kl_beta * t.kl;
    t.advantages = leave_one_out_advantages(shaped, groups);
  }
  const torch::Tensor ratio =
      torch::exp(lp.detach() - behaviour_logprobs.to(torch::kFloat32));
  const torch::Tensor weight = ratio.clamp_max(o.max_ratio);
  const torch::Tensor per_sample = (m * weight * lp).sum(1);  // (B)
  t.loss = -(t.advantages.to(torch::kFloat32) * per_sample).sum() / static_cast<double>(b);

  const double tokens = std::max(1.0, m.sum().item<double>());
  t.mean_reward = rewards.to(torch::kFloat64).mean().item<double>();
  t.mean_kl = t.kl.mean().item<double>();
  t.mean_ratio = (ratio * m).sum().item<double>() / tokens;
  t.truncated_share = ((ratio > o.max_ratio).to(torch::kFloat32) * m).sum().item<double>() / tokens;
  return t;
}

torch::Tensor next_token_logprobs(LanguageModel& model, const torch::Tensor& tokens) {
  const torch::Tensor logits = model.forward(tokens);  // (B, T, V) float32
  const torch::Tensor logp = torch::log_softmax(logits.slice(1, 0, -1), -1);
  const torch::Tensor next = tokens.slice(1, 1).unsqueeze(-1);
  return logp.gather(-1, next).squeeze(-1);
}

}  // namespace afm::train
