#include "train/fake_quant.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace afm::train {
namespace {

// Forward: round-to-f16 of x; backward: identity (the file stores scales in f16).
torch::Tensor f16_straight_through(const torch::Tensor& x) {
  return x + (x.to(torch::kHalf).to(torch::kFloat32) - x).detach();
}

torch::Tensor floor_straight_through(const torch::Tensor& x) {
  return x + (torch::floor(x) - x).detach();
}

// (..., in) -> (..., in / block, block).
torch::Tensor blocks_of(const torch::Tensor& w, int64_t block) {
  std::vector<int64_t> shape = w.sizes().vec();
  const int64_t in = shape.back();
  shape.back() = in / block;
  shape.push_back(block);
  return w.reshape(shape);
}

}  // namespace

torch::Tensor scale_gradient(const torch::Tensor& x, double scale) {
  return (x - x * scale).detach() + x * scale;
}

torch::Tensor fake_quant_q2b(const torch::Tensor& w, const torch::Tensor& f) {
  const torch::Tensor x = blocks_of(w.to(torch::kFloat32), 128);
  const torch::Tensor absmax = std::get<0>(x.abs().max(-1, true)).detach();
  const torch::Tensor d = f16_straight_through(f * absmax / 1.5);
  // An all-zero block has d = 0: its codes do not matter (0.5 * 0 = 0); divide by 1 instead.
  const torch::Tensor safe_d = torch::where(d > 0, d, torch::ones_like(d)).detach() + (d - d.detach());
  const torch::Tensor codes = torch::clamp(floor_straight_through(x / safe_d) + 2, 0, 3);
  return (d * (codes - 1.5)).reshape(w.sizes()).to(w.scalar_type());
}

torch::Tensor fake_quant_q4_0(const torch::Tensor& w) {
  const torch::Tensor x = blocks_of(w.to(torch::kFloat32), 32);
  torch::Tensor d, codes;
  {
    torch::NoGradGuard no_grad;
    // The value of largest magnitude, with its sign, maps to -8 (first one on ties).
    const torch::Tensor at = x.abs().argmax(-1, true);
    d = x.gather(-1, at) / -8.0;
    const torch::Tensor id = torch::where(d != 0, 1.0 / d, torch::zeros_like(d));
    // ggml's rounding: truncation of x * id + 8.5 (always positive here), at most 15.
    codes = torch::clamp_max(torch::trunc(x * id + 8.5), 15) - 8;
  }
  const torch::Tensor dq = d.to(torch::kHalf).to(torch::kFloat32);
  // Straight-through: the value is codes * d, the gradient reaches w unchanged.
  const torch::Tensor y = x + (codes * dq - x).detach();
  return y.reshape(w.sizes()).to(w.scalar_type());
}

double initial_q2b_factor(const torch::Tensor& w, int iterations) {
  torch::NoGradGuard no_grad;
  const torch::Tensor a = blocks_of(w.detach().to(torch::kFloat32).cpu(), 128).reshape({-1, 128}).abs();
  const torch::Tensor absmax = std::get<0>(a.max(-1));
  torch::Tensor c = a.mean(-1);
  constexpr double kRoundingWeight = 1.0 / (16.0 * 3.0);  // 4^-2 / 3
  for (int i = 0; i < iterations; ++i) {
    const torch::Tensor above = (a > c.unsqueeze(-1)).to(torch::kFloat32);
    const torch::Tensor num = (a * above).sum(-1);
    const torch::Tensor den = kRoundingWeight * (1 - above).sum(-1) + above.sum(-1);
    c = torch::where(den > 0, num / den, c);
  }
  const torch::Tensor ratio = torch::where(absmax > 0, 0.75 * c / absmax, torch::ones_like(c));
  const double f = ratio.median().item<double>();
  return std::clamp(std::isfinite(f) ? f : 1.0, 0.2, 1.0);
}

}  // namespace afm::train
