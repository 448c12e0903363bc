// Gated feed-forward activations (SwiGLU, GeGLU), split across the pool for large batches.
#pragma once

#include <cstdint>

#include "base/thread_pool.h"

namespace afm::ops {

enum class FfnActivation { kSilu, kGeluTanh };

// gate[i] = act(gate[i]) * up[i] for n values (prefill runs millions per layer): SwiGLU with
// kSilu, Gemma's GeGLU with kGeluTanh (PyTorch's gelu with approximate="tanh"); the kernels
// are cpu::VecKernels::silu_mul / gelu_tanh_mul.
void gated_inplace(FfnActivation act, float* gate, const float* up, int64_t n, Workers& pool);
inline void swiglu_inplace(float* gate, const float* up, int64_t n, Workers& pool) {
  gated_inplace(FfnActivation::kSilu, gate, up, n, pool);
}

}  // namespace afm::ops
