#include "ops/activation.h"

#include <cmath>

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
  auto run = [&](int64_t begin, int64_t end) {
    constexpr float kSqrt2OverPi = 0.7978845608028654f;
    for (int64_t i = begin; i < end; ++i) {
      const float x = gate[i];
      gate[i] = 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + 0.044715f * x * x * x))) * up[i];
    }
  };
  if (n < 16384) {
    pool.once([&] { run(0, n); });
    return;
  }
  pool.run([&](int index, int count) {
    const Range r = split_range(n, index, count, 64);
    run(r.begin, r.end);
  });
}

}  // namespace afm::ops
