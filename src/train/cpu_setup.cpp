#include "train/cpu_setup.h"

#include <dlfcn.h>
#include <torch/torch.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "base/cpu_count.h"

namespace afm::train {
namespace {

// OpenBLAS's own entry points, looked up at run time: libtorch links the generic libblas.so.3,
// so which BLAS (and which threading model) is loaded is only known in the process.
enum class OpenBlasModel { kNone, kSerial, kPthread, kOpenMp };

OpenBlasModel openblas_model() {
  using GetParallel = int (*)();
  auto get = reinterpret_cast<GetParallel>(dlsym(RTLD_DEFAULT, "openblas_get_parallel"));
  if (get == nullptr) return OpenBlasModel::kNone;
  switch (get()) {
    case 0:
      return OpenBlasModel::kSerial;
    case 1:
      return OpenBlasModel::kPthread;
    default:
      return OpenBlasModel::kOpenMp;
  }
}

void set_openblas_threads(int threads) {
  using SetThreads = void (*)(int);
  auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  if (set != nullptr) set(threads);
}

// The file that provides sgemm_, for naming a slow BLAS in the log.
std::string sgemm_library() {
  Dl_info info{};
  void* sgemm = dlsym(RTLD_DEFAULT, "sgemm_");
  if (sgemm == nullptr || dladdr(sgemm, &info) == 0 || info.dli_fname == nullptr)
    return "unknown BLAS";
  return info.dli_fname;
}

}  // namespace

bool cpu_has_avx512_bf16() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512bf16");
#else
  return false;
#endif
}

std::vector<std::pair<std::string, std::string>> process_environment_for_cpu() {
  std::vector<std::pair<std::string, std::string>> env;
  // Waiting OpenMP workers sleep instead of spinning: a spinning worker takes the core from
  // the thread with work whenever anything else runs on the machine.
  if (std::getenv("OMP_WAIT_POLICY") == nullptr) env.emplace_back("OMP_WAIT_POLICY", "PASSIVE");
#if defined(__x86_64__)
  using CoreName = char* (*)();
  auto name = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr || name == nullptr || name() == nullptr)
    return env;
  const std::string core = name();
  for (const char* avx512 : {"SkylakeX", "Cooperlake", "SapphireRapids"})
    if (core == avx512) return env;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    env.emplace_back("OPENBLAS_CORETYPE", "SkylakeX");
#endif
  return env;
}

CpuSetup configure_cpu(int threads, CpuBf16 bf16) {
  CpuSetup s;
  s.threads = threads > 0 ? threads : physical_cores();
  int torch_threads = s.threads;
  switch (openblas_model()) {
    case OpenBlasModel::kOpenMp:
      s.blas = "openblas-openmp", s.optimized_blas = true;  // follows omp_set_num_threads
      break;
    case OpenBlasModel::kPthread:
      s.blas = "openblas-pthread", s.optimized_blas = true;
      set_openblas_threads(s.threads);
      torch_threads = 1;
      break;
    case OpenBlasModel::kSerial:
      s.blas = "openblas-serial", s.optimized_blas = true;
      break;
    case OpenBlasModel::kNone:
      s.blas = sgemm_library();
      break;
  }
  using CoreName = char* (*)();
  auto core = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  if (s.optimized_blas && core != nullptr && core() != nullptr)
    s.blas += std::string(" (") + core() + ")";
  torch::set_num_threads(torch_threads);
  s.bf16_autocast =
      bf16 == CpuBf16::kOn || (bf16 == CpuBf16::kAuto && cpu_has_avx512_bf16() && at::hasMKLDNN());
  return s;
}

std::string describe(const CpuSetup& s) {
  return std::to_string(s.threads) + (s.threads == 1 ? " thread, " : " threads, ") + s.blas +
         (s.bf16_autocast ? ", bf16 autocast" : ", f32");
}

}  // namespace afm::train
