#include "base/thread_pool.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "base/error.h"

namespace afm {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#endif
}

// About 50-100 us of spinning before a worker sleeps: longer than the gap between two ops of
// one decode step, much shorter than the gap between user requests.
constexpr int kSpinIterations = 20000;

// Raw futex calls: libstdc++ 12's std::atomic::wait can miss a notify_all under this pattern.
void futex_wait(std::atomic<uint32_t>& word, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr,
          nullptr, 0);
}

void futex_wake_all(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr,
          nullptr, 0);
}

}  // namespace

ThreadPool::ThreadPool(int n_threads) : n_threads_(n_threads) {
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
  generation_.fetch_add(1, std::memory_order_acq_rel);
  futex_wake_all(generation_);
  fn(0, n_threads_);
  // Yield once spinning has gone on long enough that a worker is probably descheduled
  // (more threads than free cores): spinning then only delays it.
  for (int spins = 0; pending_.load(std::memory_order_acquire) != 0; ++spins) {
    if (spins < kSpinIterations) {
      cpu_relax();
    } else {
      sched_yield();
    }
  }
  job_ = nullptr;
}

void ThreadPool::worker_loop(int index) {
  // Generation 0 is the state at construction: a job posted before this thread first runs
  // must still be seen as new.
  uint32_t seen = 0;
  for (;;) {
    int spins = 0;
    uint32_t now;
    while ((now = generation_.load(std::memory_order_acquire)) == seen) {
      if (++spins < kSpinIterations) {
        cpu_relax();
      } else {
        futex_wait(generation_, seen);
      }
    }
    seen = now;
    if (stop_.load(std::memory_order_acquire)) return;
    (*job_)(index, n_threads_);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
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
