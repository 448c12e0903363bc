// How afm-train uses a CPU: one pool of compute threads and the fastest matrix dtype it has.
//
// libtorch parallelises element-wise ops and attention over its OpenMP pool, and hands matrix
// products to libblas.so.3 (whichever BLAS the system's alternatives select) or, for bf16, to
// oneDNN. Two pools on the same cores (OpenBLAS's own pthreads next to OpenMP's spinning
// workers) spend most of a step in the kernel scheduler, so configure_cpu() leaves one pool:
// with OpenBLAS's OpenMP build (what scripts/setup selects) the BLAS runs on libtorch's own
// OpenMP threads; with its pthread build, the BLAS keeps `threads` threads and libtorch's pool
// is cut to 1 thread, because GEMMs are most of a training step (both pools at 2 threads:
// 174-250 tokens/s; BLAS 2 + torch 1: 423-537; docs/training.md, "Training on a CPU").
//
// Contract: call configure_cpu() once, before any tensor work (thread counts set later are
// ignored by libtorch's pools already started). Not thread-safe. Never throws.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace afm::train {

enum class CpuBf16 { kAuto, kOn, kOff };

struct CpuSetup {
  int threads = 1;              // compute threads in the one pool
  std::string blas;             // "openblas-openmp (Cooperlake)" (threading model, OpenBLAS's
                                // kernels), or the path of a libblas.so.3 that is not OpenBLAS
  bool optimized_blas = false;  // OpenBLAS of any threading model
  bool bf16_autocast = false;   // matrix products in bf16 (AVX512-BF16 CPUs only)
};

// threads <= 0: physical_cores(). bf16 kAuto: on where the CPU has AVX512-BF16 and libtorch's
// bf16 matrix products use oneDNN; kOn forces it (slow without AVX512-BF16); kOff never.
CpuSetup configure_cpu(int threads, CpuBf16 bf16);

// True when the CPU executes AVX512-BF16 (vdpbf16ps).
bool cpu_has_avx512_bf16();

// Settings that the OpenMP runtime and OpenBLAS read only when they load, so the caller sets
// them and re-executes the process (afm-train's main does). Returns the variables to set;
// empty when every one is already in the environment (a user's own value always wins):
// - OMP_WAIT_POLICY=PASSIVE: idle OpenMP workers sleep instead of spinning. On 2 shared cores
//   spinning workers took the cores from the threads with work (f32, 2 threads: 70-110
//   tokens/s spinning vs 584-616 passive).
// - OPENBLAS_CORETYPE=SkylakeX where the loaded OpenBLAS chose kernels without AVX-512 on a
//   CPU that has AVX-512F/BW/DQ/VL (Debian 12's 0.3.21 predates some of them): its AVX2
//   "Haswell" sgemm reached 51 GFLOP/s on one Zen 5 core, the AVX-512 one 122.
std::vector<std::pair<std::string, std::string>> process_environment_for_cpu();

// One line for logs: "4 threads, openblas-openmp, bf16 autocast".
std::string describe(const CpuSetup& setup);

}  // namespace afm::train
