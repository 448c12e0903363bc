// A fixed pool of worker threads for data-parallel kernels.
//
// run(fn) calls fn(thread_index, n_threads) on every thread, the caller being thread 0, and
// returns when all have finished: one fork/join per op. Workers spin briefly between jobs
// (decode issues a few hundred small jobs per token, so sleeping each time would cost more than
// the work), then block on a futex when idle; the caller, waiting for the workers' shares, does
// the same. Both spin budgets adapt (base/spin_wait.h): when threads outnumber free cores a
// waiting thread soon sleeps instead of holding the core the awaited thread needs.
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

#include "base/spin_wait.h"

namespace afm {

// Anything that runs fn(index, count) on size() threads and returns when all have finished.
// Ops take a Workers so the same code runs on a whole pool or on a ThreadTeam (a slice of a
// pool working on one track of a model, see base/thread_team.h).
class Workers {
 public:
  virtual ~Workers() = default;
  virtual int size() const = 0;
  virtual void run(const std::function<void(int thread_index, int n_threads)>& fn) = 0;
  // Runs fn once (on one thread) before returning: small serial steps between parallel ones.
  virtual void once(const std::function<void()>& fn) = 0;
};

class ThreadPool final : public Workers {
 public:
  explicit ThreadPool(int n_threads);  // n_threads >= 1, including the calling thread
  ~ThreadPool() override;
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const override { return n_threads_; }
  void run(const std::function<void(int thread_index, int n_threads)>& fn) override;
  void once(const std::function<void()>& fn) override { fn(); }

 private:
  void worker_loop(int index);

  void wait_for_workers();

  int n_threads_;
  std::vector<std::thread> workers_;
  const std::function<void(int, int)>* job_ = nullptr;
  std::atomic<uint32_t> generation_{0};        // bumped once per job: workers wait on it
  std::atomic<uint32_t> pending_{0};           // workers still running the current job
  std::atomic<uint32_t> sleeping_workers_{0};  // workers in futex_wait on generation_
  std::atomic<uint32_t> caller_sleeping_{0};   // 1 while the caller is in futex_wait on pending_
  std::atomic<bool> stop_{false};
  AdaptiveSpin caller_spin_;  // touched by the calling thread only (run() is serialised)
};

// The half-open slice [begin, end) of [0, n) that thread `index` of `count` owns, in units of
// `granule` (the last slice takes the remainder).
struct Range {
  int64_t begin, end;
};
Range split_range(int64_t n, int index, int count, int64_t granule = 1);

// Splits [0, n) across `workers` and calls fn(begin, end) for each non-empty slice; when
// n <= serial_below the whole range runs once on one thread (no fork/join for tiny work).
void parallel_for(Workers& workers, int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                  int64_t serial_below = 1);

}  // namespace afm
