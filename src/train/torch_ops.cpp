#include "train/torch_ops.h"

#include <ATen/autocast_mode.h>

#include <cmath>

namespace afm::train {

torch::Tensor rms_normalize(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
  const torch::Tensor xf = x.to(torch::kFloat32);
  return xf * torch::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps) * weight;
}

torch::Tensor project(const torch::Tensor& x, const torch::Tensor& w) {
  return torch::matmul(x, w.t());
}

RopeTable make_rope_table(int64_t positions, int64_t head_dim, double theta,
                          const torch::Device& device) {
  auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
  torch::Tensor i = torch::arange(0, head_dim, 2, f64);
  torch::Tensor inv_freq = torch::pow(theta, -i / static_cast<double>(head_dim));
  torch::Tensor angle = torch::outer(torch::arange(positions, f64), inv_freq);  // (T, D/2)
  return {torch::cos(angle).to(torch::kFloat32).to(device),
          torch::sin(angle).to(torch::kFloat32).to(device)};
}

torch::Tensor rope_pairs(const torch::Tensor& x, const RopeTable& table) {
  const int64_t t = x.size(2), d = x.size(3);
  torch::Tensor pairs = x.to(torch::kFloat32).reshape({x.size(0), x.size(1), t, d / 2, 2});
  torch::Tensor x0 = pairs.select(-1, 0), x1 = pairs.select(-1, 1);
  const bool per_row = table.cos.dim() == 4;
  torch::Tensor cos = per_row ? table.cos : table.cos.slice(0, 0, t);
  torch::Tensor sin = per_row ? table.sin : table.sin.slice(0, 0, t);
  return torch::stack({x0 * cos - x1 * sin, x0 * sin + x1 * cos}, -1).reshape(x.sizes());
}

RopeTable rope_at(const RopeTable& table, const torch::Tensor& positions) {
  const int64_t b = positions.size(0), t = positions.size(1), half = table.cos.size(1);
  const torch::Tensor flat = positions.reshape({-1});
  return {table.cos.index_select(0, flat).reshape({b, 1, t, half}),
          table.sin.index_select(0, flat).reshape({b, 1, t, half})};
}

torch::Tensor same_segment_mask(const torch::Tensor& segments) {
  return (segments.unsqueeze(2) == segments.unsqueeze(1)).unsqueeze(1);
}

namespace {

// mask[i][j] = key j visible to query i: j <= i and, with a window, j > i - window.
torch::Tensor visibility_mask(int64_t t, int64_t window, const torch::Device& device) {
  auto opts = torch::TensorOptions().dtype(torch::kInt64).device(device);
  torch::Tensor q = torch::arange(t, opts).unsqueeze(1), k = torch::arange(t, opts).unsqueeze(0);
  torch::Tensor mask = k <= q;
  if (window > 0) mask = mask & (k > q - window);
  return mask;
}

}  // namespace

torch::Tensor causal_attention(const torch::Tensor& q, const torch::Tensor& k,
                               const torch::Tensor& v, int64_t window,
                               const torch::Tensor& same_segment) {
  const int64_t t = q.size(2), group = q.size(1) / k.size(1);
  torch::Tensor kk = group == 1 ? k : k.repeat_interleave(group, 1);
  torch::Tensor vv = group == 1 ? v : v.repeat_interleave(group, 1);
  const bool windowed = window > 0 && window < t;
  auto visible = [&] {
    torch::Tensor mask = visibility_mask(t, windowed ? window : 0, q.device());
    return same_segment.defined() ? same_segment & mask : mask;
  };
#if TORCH_VERSION_MAJOR >= 2
  // Fused kernels: flash / memory-efficient on CUDA, the flash-attention CPU kernel on the CPU
  // (libtorch 2.x; Debian's 1.13 takes the explicit path below).
  if (q.is_cuda() || q.is_cpu()) {
    torch::Tensor qq = q, k2 = kk, v2 = vv;
    if (at::autocast::is_autocast_enabled(q.device().type())) {
      qq = q.to(torch::kBFloat16), k2 = kk.to(torch::kBFloat16), v2 = vv.to(torch::kBFloat16);
    }
    if (!windowed && !same_segment.defined()) {
      return at::scaled_dot_product_attention(qq, k2, v2, {}, 0.0, true);
    }
    return at::scaled_dot_product_attention(qq, k2, v2, visible(), 0.0, false);
  }
#endif
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(3)));
  torch::Tensor scores = torch::matmul(q, kk.transpose(-2, -1)).to(torch::kFloat32) * scale;
  scores = scores.masked_fill(visible().logical_not(), -std::numeric_limits<float>::infinity());
  return torch::matmul(torch::softmax(scores, -1).to(vv.scalar_type()), vv);
}

torch::Tensor swiglu(const torch::Tensor& x, const torch::Tensor& gate, const torch::Tensor& up,
                     const torch::Tensor& down) {
  return project(torch::silu(project(x, gate)) * project(x, up), down);
}

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
AutocastGuard::AutocastGuard(bool enabled, c10::DeviceType device)
    : enabled_(enabled), device_(device) {
  if (!enabled_) return;
  previous_ = at::autocast::is_autocast_enabled(device_);
  at::autocast::set_autocast_enabled(device_, true);
  at::autocast::set_autocast_dtype(device_, at::kBFloat16);
}
AutocastGuard::~AutocastGuard() {
  if (!enabled_) return;
  at::autocast::set_autocast_enabled(device_, previous_);
  at::autocast::clear_cache();
}
#else
AutocastGuard::AutocastGuard(bool enabled, c10::DeviceType device)
    : enabled_(enabled), device_(device) {
  if (!enabled_) return;
  const bool cpu = device_ == c10::DeviceType::CPU;
  previous_ = cpu ? at::autocast::is_cpu_enabled() : at::autocast::is_enabled();
  if (cpu) {
    at::autocast::set_cpu_enabled(true);
    at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
  } else {
    at::autocast::set_enabled(true);
    at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
  }
}
AutocastGuard::~AutocastGuard() {
  if (!enabled_) return;
  if (device_ == c10::DeviceType::CPU)
    at::autocast::set_cpu_enabled(previous_);
  else
    at::autocast::set_enabled(previous_);
  at::autocast::clear_cache();
}
#endif

}  // namespace afm::train
