#include "ops/activation.h"

#include "backend/cpu/vec.h"

namespace afm::ops {

void gated_inplace(FfnActivation act, float* gate, const float* up, int64_t n, Workers& pool) {
  const cpu::VecKernels& vk = cpu::best_vec_kernels();
  const auto kernel = act == FfnActivation::kGeluTanh ? vk.gelu_tanh_mul : vk.silu_mul;
  if (n < 16384) {  // one decode step: not worth a fork/join
    pool.once([&] { kernel(gate, up, gate, n); });
    return;
  }
  pool.run([&](int index, int count) {
    const Range r = split_range(n, index, count, 64);
    kernel(gate + r.begin, up + r.begin, gate + r.begin, r.end - r.begin);
  });
}

}  // namespace afm::ops
