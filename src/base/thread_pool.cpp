#include "base/thread_pool.h"

#include <algorithm>

#include "base/error.h"

namespace afm {
namespace {

// Spin budgets (base/spin_wait.h). A worker's covers the gaps between the ops of a decode step
// and usually between two steps; the caller's covers the workers finishing their shares a
// little after its own. Both shrink towards the minimum while waits keep ending in sleep.
constexpr int64_t kWorkerSpinMaxNs = 200'000;
constexpr int64_t kCallerSpinMaxNs = 100'000;
constexpr int64_t kSpinMinNs = 2'000;

}  // namespace

ThreadPool::ThreadPool(int n_threads)
    : n_threads_(n_threads), caller_spin_(kSpinMinNs, kCallerSpinMaxNs) {
  AFM_CHECK(n_threads >= 1);
  workers_.reserve(n_threads - 1);
  for (int i = 1; i < n_threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  futex_wake_all(generation_);
  for (auto& t : workers_) t.join();
}

void ThreadPool::run(const std::function<void(int, int)>& fn) {
  if (n_threads_ == 1) {
    fn(0, 1);
    return;
  }
  job_ = &fn;
  pending_.store(n_threads_ - 1, std::memory_order_relaxed);
  // seq_cst pairs with the worker's sleeping_workers_ increment and generation_ re-check:
  // either the worker sees the new generation or this thread sees it asleep and wakes it.
  generation_.fetch_add(1, std::memory_order_seq_cst);
  if (sleeping_workers_.load(std::memory_order_seq_cst) != 0) futex_wake_all(generation_);
  fn(0, n_threads_);
  wait_for_workers();
  job_ = nullptr;
}

void ThreadPool::wait_for_workers() {
  const auto done = [this] { return pending_.load(std::memory_order_acquire) == 0; };
  if (spin_until(done, caller_spin_.budget_ns())) {
    caller_spin_.spun_enough();
    return;
  }
  caller_spin_.had_to_sleep();
  caller_sleeping_.store(1, std::memory_order_seq_cst);
  for (uint32_t left; (left = pending_.load(std::memory_order_seq_cst)) != 0;) {
    futex_wait(pending_, left);
  }
  caller_sleeping_.store(0, std::memory_order_relaxed);
}

void ThreadPool::worker_loop(int index) {
  AdaptiveSpin spin(kSpinMinNs, kWorkerSpinMaxNs);
  // Generation 0 is the state at construction: a job posted before this thread first runs
  // must still be seen as new.
  uint32_t seen = 0;
  for (;;) {
    const auto posted = [&] { return generation_.load(std::memory_order_acquire) != seen; };
    if (spin_until(posted, spin.budget_ns())) {
      spin.spun_enough();
    } else {
      spin.had_to_sleep();
      sleeping_workers_.fetch_add(1, std::memory_order_seq_cst);
      while (generation_.load(std::memory_order_seq_cst) == seen) futex_wait(generation_, seen);
      sleeping_workers_.fetch_sub(1, std::memory_order_relaxed);
    }
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load(std::memory_order_acquire)) return;
    (*job_)(index, n_threads_);
    // The last worker out wakes the caller if it gave up spinning (seq_cst pairs with its
    // caller_sleeping_ store and pending_ re-check, as above).
    if (pending_.fetch_sub(1, std::memory_order_seq_cst) == 1 &&
        caller_sleeping_.load(std::memory_order_seq_cst) != 0) {
      futex_wake_all(pending_);
    }
  }
}

Range split_range(int64_t n, int index, int count, int64_t granule) {
  const int64_t units = (n + granule - 1) / granule;
  const int64_t per = units / count, extra = units % count;
  const int64_t begin_unit = index * per + std::min<int64_t>(index, extra);
  const int64_t end_unit = begin_unit + per + (index < extra ? 1 : 0);
  return {std::min(n, begin_unit * granule), std::min(n, end_unit * granule)};
}

void parallel_for(Workers& workers, int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                  int64_t serial_below) {
  if (n <= 0) return;
  if (n <= serial_below) {
    workers.once([&] { fn(0, n); });
    return;
  }
  workers.run([&](int index, int count) {
    const Range r = split_range(n, index, count);
    if (r.begin < r.end) fn(r.begin, r.end);
  });
}

}  // namespace afm
