// Peak multiply-add throughput of this CPU with N threads (the compute roofline for training):
// each thread runs independent chains of vector FMAs on registers, enough chains to cover the
// FMA latency on every port, so the loop is bound by FMA issue alone. FP32 is the best of
// 256-bit (AVX2 FMA) and 512-bit (AVX-512F) FMAs; BF16 is AVX512-BF16's vdpbf16ps (a pair of
// bf16 products added to each f32 lane, 4 FLOPs per lane) where the CPU has it. Best of 5.
//   build/bench/fma_peak_bench [--threads N] [--json]
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr long kIters = 20'000'000;  // per thread and pass: ~0.1-0.3 s at a few GHz

// 12 chains x 8 lanes x 2 FLOPs per iteration.
__attribute__((target("avx2,fma"))) double fma256(long iters) {
  __m256 acc[12];
#pragma GCC unroll 16
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(0.001f * i);
  const __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(1e-6f);
  for (long n = 0; n < iters; ++n) {
#pragma GCC unroll 16
    for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
    asm volatile("" : "+x"(acc[0]), "+x"(acc[5]), "+x"(acc[11]));  // keep the loop
  }
  __m256 s = acc[0];
#pragma GCC unroll 16
  for (int i = 1; i < 12; ++i) s = _mm256_add_ps(s, acc[i]);
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0];
}

// 16 chains x 16 lanes x 2 FLOPs per iteration.
__attribute__((target("avx512f"))) double fma512(long iters) {
  __m512 acc[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) acc[i] = _mm512_set1_ps(0.001f * i);
  const __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(1e-6f);
  for (long n = 0; n < iters; ++n) {
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
    asm volatile("" : "+v"(acc[0]), "+v"(acc[7]), "+v"(acc[15]));
  }
  __m512 s = acc[0];
#pragma GCC unroll 16
  for (int i = 1; i < 16; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}

// 16 chains x 16 lanes x 2 products x 2 FLOPs per iteration.
__attribute__((target("avx512f,avx512bf16"))) double dpbf16(long iters) {
  __m512 acc[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) acc[i] = _mm512_set1_ps(0.001f * i);
  const __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(1e-3f));
  for (long n = 0; n < iters; ++n) {
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) acc[i] = _mm512_dpbf16_ps(acc[i], a, a);
    asm volatile("" : "+v"(acc[0]), "+v"(acc[7]), "+v"(acc[15]));
  }
  __m512 s = acc[0];
#pragma GCC unroll 16
  for (int i = 1; i < 16; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}

// GFLOP/s of `kernel` (flops_per_iter per call iteration) on `threads` threads, best of 5.
double measure(int threads, double flops_per_iter, const std::function<double(long)>& kernel) {
  double best = 0;
  static volatile double sink = 0;
  for (int pass = 0; pass < 5; ++pass) {
    std::vector<double> out(threads);
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { out[t] = kernel(kIters); });
    for (auto& th : pool) th.join();
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (double v : out) sink = sink + v;
    best = std::max(best, flops_per_iter * kIters * threads / s / 1e9);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--threads") && i + 1 < argc)
      threads = std::stoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--json"))
      json = true;
    else {
      std::fprintf(stderr, "usage: fma_peak_bench [--threads N] [--json]\n");
      return 2;
    }
  }
  __builtin_cpu_init();
  double f32_256 = 0, f32_512 = 0, bf16 = 0;
  if (__builtin_cpu_supports("fma")) f32_256 = measure(threads, 12 * 8 * 2, fma256);
  if (__builtin_cpu_supports("avx512f")) f32_512 = measure(threads, 16 * 16 * 2, fma512);
  if (__builtin_cpu_supports("avx512bf16")) bf16 = measure(threads, 16 * 16 * 4, dpbf16);
  const double f32 = std::max(f32_256, f32_512);
  if (json) {
    std::printf(
        "{\"threads\": %d, \"fp32_gflops\": %.1f, \"fp32_avx2_gflops\": %.1f, "
        "\"fp32_avx512_gflops\": %.1f, \"bf16_gflops\": %.1f}\n",
        threads, f32, f32_256, f32_512, bf16);
  } else {
    std::printf("threads %d: FP32 %.1f GFLOP/s (AVX2 %.1f, AVX-512 %.1f), BF16 %.1f GFLOP/s\n",
                threads, f32, f32_256, f32_512, bf16);
  }
  return 0;
}
