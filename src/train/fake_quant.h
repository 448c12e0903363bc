// Quantization-aware training (tech report section 6): the forward pass sees the weights as the
// runtime will store them, the backward pass trains through the rounding (straight-through).
//
// q2_b (balanced 2-bit, quant/balanced_2bit.h): per 128-value block b of a row,
//   d_b = f16(f * max|W_b| / 1.5),  W~ = d_b * (clamp(floor(W / d_b) + 2, 0, 3) - 1.5)
// with one learnable factor f per tensor (the report's s = f max|W| / q_max, here over each
// block, which is the file format's scale). Gradients (LSQ-style straight-through): dW~/dW = 1
// inside the clamp range and 0 outside; dW~/df through d, the rounding residual inside the
// range and the level (+-1.5) outside. max|W_b| is treated as a constant.
// q4_0 (the embedding's 4 bits): ggml's rounding (quant/block_formats.h), straight-through.
//
// Contract: every function is the exact value the runtime decodes from the file written with the
// same f (quantize_row_q2b with f, quantize_row_q4_0), up to float rounding of the division;
// the last dimension must be a multiple of 128 (q2_b) or 32 (q4_0).
#pragma once

#include <torch/torch.h>

namespace afm::train {

torch::Tensor fake_quant_q2b(const torch::Tensor& w, const torch::Tensor& f);
torch::Tensor fake_quant_q4_0(const torch::Tensor& w);

// The report's initialisation of f: a clipping value c per block from the Newton-Raphson
// recursion that balances the clipping error above c against the rounding error below it
// (OCTAV: c <- E[|w| 1{|w|>c}] / (4^-B / 3 E[1{|w|<=c}] + E[1{|w|>c}]), B = 2), and the
// tensor's f = median over blocks of 0.75 c / max|W_b| (the top level 1.5 d of the balanced
// grid is at 3/4 of the clip 2 d). Clamped to [0.2, 1].
double initial_q2b_factor(const torch::Tensor& w, int iterations = 20);

// x in the forward pass, x * scale in the backward pass (the report's gradient scaling of the
// quantization factors by 1 / sqrt(neurons)).
torch::Tensor scale_gradient(const torch::Tensor& x, double scale);

}  // namespace afm::train
