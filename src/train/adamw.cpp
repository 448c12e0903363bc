#include "train/adamw.h"

#include <cmath>

#include "base/error.h"

namespace afm::train {
namespace {

std::vector<torch::Tensor> gradients_of(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> grads;
  grads.reserve(params.size());
  for (const torch::Tensor& p : params) grads.push_back(p.grad());
  return grads;
}

}  // namespace

AdamW::AdamW(const std::vector<NamedParameter>& params, const AdamWOptions& options)
    : options_(options) {
  groups_.resize(2);
  groups_[0].weight_decay = options.weight_decay;
  for (const NamedParameter& p : params) {
    Group& g = groups_[p.decay ? 0 : 1];
    g.names.push_back(p.gguf_name);
    g.params.push_back(p.tensor);
  }
}

void AdamW::zero_grad() {
  for (Group& g : groups_)
    for (torch::Tensor& p : g.params)
      if (p.grad().defined()) p.mutable_grad() = torch::Tensor();
}

void AdamW::init_state() {
  for (Group& g : groups_) {
    if (!g.exp_avg.empty()) continue;
    for (const torch::Tensor& p : g.params) {
      g.exp_avg.push_back(torch::zeros_like(p));
      g.exp_avg_sq.push_back(torch::zeros_like(p));
    }
  }
}

void AdamW::step_group(Group& g, double bias1, double bias2) {
  if (g.params.empty()) return;
  std::vector<torch::Tensor> grads = gradients_of(g.params);
  for (size_t i = 0; i < grads.size(); ++i)
    if (!grads[i].defined()) grads[i] = torch::zeros_like(g.params[i]);
  const double b1 = options_.beta1, b2 = options_.beta2;
  if (g.weight_decay > 0) torch::_foreach_mul_(g.params, 1.0 - options_.lr * g.weight_decay);
  torch::_foreach_mul_(g.exp_avg, b1);
  torch::_foreach_add_(g.exp_avg, grads, 1.0 - b1);
  torch::_foreach_mul_(g.exp_avg_sq, b2);
  torch::_foreach_addcmul_(g.exp_avg_sq, grads, grads, 1.0 - b2);
  std::vector<torch::Tensor> denom = torch::_foreach_sqrt(g.exp_avg_sq);
  torch::_foreach_div_(denom, std::sqrt(bias2));
  torch::_foreach_add_(denom, options_.eps);
  torch::_foreach_addcdiv_(g.params, g.exp_avg, denom, -options_.lr / bias1);
}

void AdamW::step() {
  torch::NoGradGuard no_grad;
  init_state();
  ++step_;
  const double bias1 = 1.0 - std::pow(options_.beta1, static_cast<double>(step_));
  const double bias2 = 1.0 - std::pow(options_.beta2, static_cast<double>(step_));
  for (Group& g : groups_) step_group(g, bias1, bias2);
}

void AdamW::save(torch::serialize::OutputArchive& archive) const {
  archive.write("adamw/step", torch::tensor(step_, torch::kInt64));
  for (const Group& g : groups_)
    for (size_t i = 0; i < g.exp_avg.size(); ++i) {
      archive.write("adamw/m/" + g.names[i], g.exp_avg[i].cpu());
      archive.write("adamw/v/" + g.names[i], g.exp_avg_sq[i].cpu());
    }
}

void AdamW::load(torch::serialize::InputArchive& archive) {
  torch::Tensor step;
  if (!archive.try_read("adamw/step", step))
    throw_error(ErrorCode::kFormat, "checkpoint has no optimizer step (adamw/step)");
  step_ = step.item<int64_t>();
  if (step_ == 0) return;
  init_state();
  torch::NoGradGuard no_grad;
  for (Group& g : groups_)
    for (size_t i = 0; i < g.params.size(); ++i)
      for (auto [key, state] : {std::pair{"adamw/m/", &g.exp_avg[i]},
                                std::pair{"adamw/v/", &g.exp_avg_sq[i]}}) {
        torch::Tensor t;
        if (!archive.try_read(key + g.names[i], t) || t.sizes() != state->sizes())
          throw_error(ErrorCode::kFormat, std::string("checkpoint optimizer state ") + key +
                                              g.names[i] + " is missing or mis-shaped");
        state->copy_(t);
      }
}

double clip_gradient_norm(const std::vector<torch::Tensor>& params, double max_norm) {
  std::vector<torch::Tensor> grads;
  for (const torch::Tensor& p : params)
    if (p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return 0;
  torch::NoGradGuard no_grad;
  const torch::Tensor norm = torch::stack(torch::_foreach_norm(grads, 2)).norm();
  const double total = norm.item<double>();
  if (max_norm > 0 && std::isfinite(max_norm) && std::isfinite(total) && total > max_norm)
    torch::_foreach_mul_(grads, max_norm / (total + 1e-6));
  return total;
}

}  // namespace afm::train
