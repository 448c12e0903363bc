// The CUDA backend's entry points. Built from .cu files when nvcc is available; otherwise
// from no_cuda.cpp, whose functions report that CUDA is absent, so CPU-only builds link.
//
// Contract: nothing here throws for a missing GPU except the compute calls, which throw
// Error(kUnsupported) naming the reason (not compiled with CUDA, no device, a CUDA error).
#pragma once

#include <cstddef>
#include <string>

namespace afm::cuda {

bool compiled_with_cuda();
// Number of usable CUDA devices; 0 when CUDA is not compiled in or no driver/device exists.
int device_count();
// A one-line description of the CUDA runtime state, for `afm info`-style reports.
std::string describe();

// y = a * x + y on the first device (a smoke test of the kernel/launcher path).
void saxpy(float a, const float* x, float* y, size_t n);  // x, y: (n), host memory

}  // namespace afm::cuda
