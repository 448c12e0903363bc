// SwiGLU activation, split across the pool for large batches.
#pragma once

#include <cstdint>

#include "base/thread_pool.h"

namespace afm::ops {

// gate[i] = silu(gate[i]) * up[i] for n values (prefill runs millions per layer).
void swiglu_inplace(float* gate, const float* up, int64_t n, Workers& pool);

}  // namespace afm::ops
