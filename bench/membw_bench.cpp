// Memory read bandwidth with N threads (the decode roofline): each thread sums its share of
// a buffer much larger than the caches with 256-bit loads; best of several passes. The buffer
// sits on huge pages where the system allows, as a model's decode copies do
// (base/huge_page_arena.h): on 4 KiB pages one core read 25-29 GB/s where it reads 29-31 on
// 2 MiB pages (AMD EPYC Zen 4), so the 4 KiB figure would understate the limit.
//   build/bench/membw_bench [--threads N] [--mib SIZE] [--json]
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "base/huge_page_arena.h"

namespace {

__attribute__((target("avx2"))) double sum_range(const float* p, size_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i + 32 <= n; i += 32) {
    a0 = _mm256_add_ps(a0, _mm256_loadu_ps(p + i));
    a1 = _mm256_add_ps(a1, _mm256_loadu_ps(p + i + 8));
    a2 = _mm256_add_ps(a2, _mm256_loadu_ps(p + i + 16));
    a3 = _mm256_add_ps(a3, _mm256_loadu_ps(p + i + 24));
  }
  float out[8];
  _mm256_storeu_ps(out, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
  return out[0] + out[7];
}

}  // namespace

int main(int argc, char** argv) {
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  size_t mib = 1024;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::stoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--mib") && i + 1 < argc) mib = std::stoul(argv[++i]);
    else if (!std::strcmp(argv[i], "--json")) json = true;
    else {
      std::fprintf(stderr, "usage: membw_bench [--threads N] [--mib SIZE] [--json]\n");
      return 2;
    }
  }
  const size_t n = mib * 1024 * 1024 / sizeof(float);
  afm::HugePageArena arena;
  auto* data = reinterpret_cast<float*>(arena.allocate(n * sizeof(float)));
  std::fill(data, data + n, 1.0f);
  double best = 0, sink = 0;
  for (int pass = 0; pass < 5; ++pass) {
    std::vector<double> partial(threads);
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        const size_t begin = n / threads * t, end = t + 1 == threads ? n : n / threads * (t + 1);
        partial[t] = sum_range(data + begin, end - begin);
      });
    }
    for (auto& th : pool) th.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (double p : partial) sink += p;
    best = std::max(best, n * sizeof(float) / s / 1e9);
  }
  if (json) {
    std::printf("{\"threads\": %d, \"read_gb_per_s\": %.3f, \"checksum\": %.1f}\n", threads, best, sink);
  } else {
    std::printf("read bandwidth, %d threads: %.2f GB/s\n", threads, best);
  }
  return 0;
}
