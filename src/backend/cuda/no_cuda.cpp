// Stand-in for the CUDA backend in builds without nvcc: same symbols, no device.
#include "backend/cuda/cuda_backend.h"
#include "base/error.h"

namespace afm::cuda {

bool compiled_with_cuda() { return false; }
int device_count() { return 0; }
std::string describe() { return "not compiled with CUDA"; }

void saxpy(float, const float*, float*, size_t) {
  throw_error(ErrorCode::kUnsupported, "cuda: this build of afm has no CUDA backend");
}

}  // namespace afm::cuda
