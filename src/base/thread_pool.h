// A fixed pool of worker threads for data-parallel kernels.
//
// run(fn) calls fn(thread_index, n_threads) on every thread, the caller being thread 0, and
// returns when all have finished: one fork/join per op. Workers spin briefly between jobs
// (decode issues a few hundred small jobs per token, so sleeping on a condition variable each
// time would cost more than the work), then block on a futex when idle.
//
// Thread safety: one run() at a time per pool (callers serialise; the engine owns its pool).
// fn must not throw: kernels never do. Work splitting is static (split_range), so every
// output element is computed by the same code in the same order whatever the thread count.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

namespace afm {

class ThreadPool {
 public:
  explicit ThreadPool(int n_threads);  // n_threads >= 1, including the calling thread
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }
  void run(const std::function<void(int thread_index, int n_threads)>& fn);

 private:
  void worker_loop(int index);

  int n_threads_;
  std::vector<std::thread> workers_;
  const std::function<void(int, int)>* job_ = nullptr;
  std::atomic<uint32_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
};

// The half-open slice [begin, end) of [0, n) that thread `index` of `count` owns, in units of
// `granule` (the last slice takes the remainder).
struct Range {
  int64_t begin, end;
};
Range split_range(int64_t n, int index, int count, int64_t granule = 1);

}  // namespace afm
