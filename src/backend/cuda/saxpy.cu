// Smoke-test kernel for the CUDA backend: proves the toolchain, launcher and error handling.
#include <cuda_runtime.h>

#include <string>

#include "backend/cuda/cuda_backend.h"
#include "base/error.h"

namespace afm::cuda {

namespace {

__global__ void saxpy_kernel(int n, float a, const float* x, float* y) {  // x, y: (n)
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    throw_error(ErrorCode::kUnsupported,
                std::string("cuda: ") + what + ": " + cudaGetErrorString(err));
  }
}

}  // namespace

bool compiled_with_cuda() { return true; }

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}

std::string describe() {
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  return "cuda runtime " + std::to_string(runtime / 1000) + "." +
         std::to_string(runtime % 1000 / 10) + ", " + std::to_string(device_count()) + " device(s)";
}

void saxpy(float a, const float* x, float* y, size_t n) {
  if (device_count() == 0) throw_error(ErrorCode::kUnsupported, "cuda: no CUDA device available");
  size_t bytes = n * sizeof(float);
  float* dx = nullptr;
  float* dy = nullptr;
  check(cudaMalloc(&dx, bytes), "cudaMalloc");
  check(cudaMalloc(&dy, bytes), "cudaMalloc");
  cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(dy, y, bytes, cudaMemcpyHostToDevice);
  int count = static_cast<int>(n);
  saxpy_kernel<<<(count + 255) / 256, 256>>>(count, a, dx, dy);
  cudaError_t launch = cudaGetLastError();
  cudaError_t copy = cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost);
  cudaFree(dx);
  cudaFree(dy);
  check(launch, "kernel launch");
  check(copy, "cudaMemcpy");
}

}  // namespace afm::cuda
