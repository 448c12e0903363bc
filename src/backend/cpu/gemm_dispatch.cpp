// Picks a kernel set from the CPU's features; the SIMD files are compiled only for x86-64.
#include "backend/cpu/gemm.h"
#include "base/cpu_features.h"

namespace afm::cpu {

const GemmKernels* avx2_gemm_kernels_impl();
const GemmKernels* avx512_gemm_kernels_impl();

const GemmKernels* avx2_gemm_kernels() {
  return cpu_features().avx2 ? avx2_gemm_kernels_impl() : nullptr;
}

const GemmKernels* avx512_gemm_kernels() {
  const CpuFeatures& f = cpu_features();
  return f.avx512 && f.avx512_vnni ? avx512_gemm_kernels_impl() : nullptr;
}

const GemmKernels& best_gemm_kernels() {
  static const GemmKernels* best = [] {
    if (const GemmKernels* k = avx512_gemm_kernels()) return k;
    if (const GemmKernels* k = avx2_gemm_kernels()) return k;
    return &scalar_gemm_kernels();
  }();
  return *best;
}

}  // namespace afm::cpu
