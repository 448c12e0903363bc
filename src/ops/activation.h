// Gated feed-forward activations (SwiGLU, GeGLU), split across the pool for large batches.
#pragma once

#include <cstdint>

#include "base/thread_pool.h"

namespace afm::ops {

// gate[i] = silu(gate[i]) * up[i] for n values (prefill runs millions per layer).
void swiglu_inplace(float* gate, const float* up, int64_t n, Workers& pool);
// gate[i] = gelu_tanh(gate[i]) * up[i] (Gemma's GeGLU: PyTorch's gelu with
// approximate="tanh", 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))); cpu::VecKernels).
void geglu_inplace(float* gate, const float* up, int64_t n, Workers& pool);

enum class FfnActivation { kSilu, kGeluTanh };

}  // namespace afm::ops
