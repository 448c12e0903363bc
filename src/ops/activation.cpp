#include "ops/activation.h"

#include "backend/cpu/vec.h"

namespace afm::ops {

void swiglu_inplace(float* gate, const float* up, int64_t n, Workers& pool) {
  const cpu::VecKernels& vk = cpu::best_vec_kernels();
  if (n < 16384) {  // one decode step: not worth a fork/join
    pool.once([&] { vk.silu_mul(gate, up, gate, n); });
    return;
  }
  pool.run([&](int index, int count) {
    const Range r = split_range(n, index, count, 64);
    vk.silu_mul(gate + r.begin, up + r.begin, gate + r.begin, r.end - r.begin);
  });
}

void geglu_inplace(float* gate, const float* up, int64_t n, Workers& pool) {
  const cpu::VecKernels& vk = cpu::best_vec_kernels();
  if (n < 16384) {
    pool.once([&] { vk.gelu_tanh_mul(gate, up, gate, n); });
    return;
  }
  pool.run([&](int index, int count) {
    const Range r = split_range(n, index, count, 64);
    vk.gelu_tanh_mul(gate + r.begin, up + r.begin, gate + r.begin, r.end - r.begin);
  });
}

}  // namespace afm::ops
