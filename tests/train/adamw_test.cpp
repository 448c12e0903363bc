// The multi-tensor AdamW and gradient clipping against libtorch's own per-tensor
// torch::optim::AdamW and torch::nn::utils::clip_grad_norm_ (the oracle), and the state's
// round trip through an archive.
#include <gtest/gtest.h>

#include "train/adamw.h"

namespace afm::train {
namespace {

std::vector<NamedParameter> random_parameters(uint64_t seed) {
  torch::manual_seed(seed);
  std::vector<NamedParameter> out;
  out.push_back({"w", torch::randn({7, 5}).requires_grad_(), true});
  out.push_back({"b", torch::randn({5}).requires_grad_(), false});
  out.push_back({"e", torch::randn({3, 4, 2}).requires_grad_(), true});
  return out;
}

void set_gradients(const std::vector<torch::Tensor>& params, int step) {
  torch::manual_seed(100 + step);
  for (const torch::Tensor& p : params) p.mutable_grad() = torch::randn_like(p) * 3;
}

std::vector<torch::Tensor> tensors_of(const std::vector<NamedParameter>& named) {
  std::vector<torch::Tensor> out;
  for (const NamedParameter& p : named) out.push_back(p.tensor);
  return out;
}

TEST(AdamW, MatchesLibtorchsAdamWWithDecayOnlyOnMatrices) {
  auto ours = random_parameters(1), theirs = random_parameters(1);
  AdamW opt(ours, {0.01, 0.9, 0.95, 1e-8, 0.1});
  std::vector<torch::Tensor> decay{theirs[0].tensor, theirs[2].tensor}, plain{theirs[1].tensor};
  auto options = [](double wd) {
    return std::make_unique<torch::optim::AdamWOptions>(
        torch::optim::AdamWOptions(0.01).betas({0.9, 0.95}).eps(1e-8).weight_decay(wd));
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, options(0.1));
  groups.emplace_back(plain, options(0.0));
  torch::optim::AdamW reference(groups, torch::optim::AdamWOptions(0.01));
  for (int step = 0; step < 6; ++step) {
    set_gradients(tensors_of(ours), step);
    set_gradients(tensors_of(theirs), step);
    opt.step();
    reference.step();
  }
  for (size_t i = 0; i < ours.size(); ++i)
    EXPECT_LT((ours[i].tensor - theirs[i].tensor).abs().max().item<double>(), 1e-6)
        << ours[i].gguf_name;
  EXPECT_EQ(opt.steps_taken(), 6);
}

TEST(AdamW, StateSurvivesAnArchiveRoundTrip) {
  auto a = random_parameters(2), b = random_parameters(2);
  AdamW first(a, {}), second(b, {});
  for (int step = 0; step < 3; ++step) {
    set_gradients(tensors_of(a), step);
    first.step();
  }
  torch::serialize::OutputArchive out;
  first.save(out);
  std::stringstream bytes;
  out.save_to(bytes);
  torch::serialize::InputArchive in;
  in.load_from(bytes);
  second.load(in);
  {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < a.size(); ++i) b[i].tensor.copy_(a[i].tensor);
  }
  set_gradients(tensors_of(a), 9);
  set_gradients(tensors_of(b), 9);
  first.step();
  second.step();
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_TRUE(torch::equal(a[i].tensor, b[i].tensor)) << a[i].gguf_name;
}

TEST(ClipGradientNorm, MatchesLibtorchsClipGradNorm) {
  auto ours = random_parameters(3), theirs = random_parameters(3);
  set_gradients(tensors_of(ours), 0);
  set_gradients(tensors_of(theirs), 0);
  const double norm = clip_gradient_norm(tensors_of(ours), 1.5);
  const double reference = torch::nn::utils::clip_grad_norm_(tensors_of(theirs), 1.5);
  EXPECT_NEAR(norm, reference, 1e-9 * reference);
  for (size_t i = 0; i < ours.size(); ++i)
    EXPECT_LT((ours[i].tensor.grad() - theirs[i].tensor.grad()).abs().max().item<double>(), 1e-6);
  set_gradients(tensors_of(ours), 1);
  const torch::Tensor before = ours[0].tensor.grad().clone();
  clip_gradient_norm(tensors_of(ours), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(torch::equal(before, ours[0].tensor.grad()));
}

}  // namespace
}  // namespace afm::train
