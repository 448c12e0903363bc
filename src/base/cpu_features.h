// What the CPU we run on can do, detected once with CPUID (and XGETBV for the OS-enabled state).
//
// Kernels are compiled per instruction set and picked at run time from these flags, so one
// binary runs everywhere. AMX needs an explicit permission from Linux before any thread touches
// it (arch_prctl ARCH_REQ_XCOMP_PERM): request_amx_permission() asks for it and must run at
// start-up, before worker threads exist; without it AMX reads as unavailable.
#pragma once

#include <string>

#include "base/cpu_count.h"  // available_cores(), physical_cores()

namespace afm {

struct CpuFeatures {
  bool avx2 = false;  // with FMA and F16C (every AVX2 CPU we target has both)
  bool avx512 = false;  // F + BW + VL + DQ
  bool avx512_vnni = false;
  bool avx512_bf16 = false;
  bool avx512_fp16 = false;
  bool amx_tile = false;  // hardware has AMX (tile + int8 + bf16)
  bool amx_usable = false;  // hardware has it AND the OS granted this process permission
};

// Detected once (thread-safe). AFM_CPU=scalar|avx2|avx512 caps what kernels may use (testing).
const CpuFeatures& cpu_features();

// Asks Linux for the AMX tile-data permission. Returns true when granted; false (not an error)
// when the CPU or kernel has no AMX. Idempotent.
bool request_amx_permission();

// "avx512 vnni" style summary for logs and `afm info`.
std::string describe(const CpuFeatures& features);

}  // namespace afm
