// Waiting for another thread of the same process: spin for a bounded time, then sleep on a futex.
//
// Spinning is what makes fork/join cheap when every thread has a core (a decode step issues a
// few hundred small jobs); sleeping is what keeps it from collapsing when threads outnumber free
// cores (two processes on one machine, or several pools in one server): a thread that spins
// while the thread it waits for is descheduled holds the very core that thread needs. Budgets
// are in time, not iterations: one `pause` costs 10-140 cycles depending on the CPU.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace afm {

inline void cpu_relax() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#endif
}

// Spins until done() or until budget_ns have passed; returns done()'s last answer.
// The clock is read once per 64 polls (a vDSO call, ~20 ns) so it costs nothing per poll.
template <class Done>
bool spin_until(Done&& done, int64_t budget_ns) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() - start >= std::chrono::nanoseconds(budget_ns)) {
      return done();
    }
  }
}

// Sleeps while `word` holds `expected` (returns at once if it does not; may return spuriously,
// so callers loop). Raw futex calls: libstdc++ 12's std::atomic::wait can miss a notify_all
// under the pool's pattern.
void futex_wait(std::atomic<uint32_t>& word, uint32_t expected);
void futex_wake_all(std::atomic<uint32_t>& word);

// A spin budget that adapts to whether spinning pays: halved each time the wait ended in a
// sleep (the awaited thread was probably descheduled), doubled back each time spinning was
// enough. Owned by one waiting thread.
class AdaptiveSpin {
 public:
  AdaptiveSpin(int64_t min_ns, int64_t max_ns) : min_ns_(min_ns), max_ns_(max_ns), ns_(max_ns) {}
  int64_t budget_ns() const { return ns_; }
  void spun_enough() { ns_ = ns_ * 2 > max_ns_ ? max_ns_ : ns_ * 2; }
  void had_to_sleep() { ns_ = ns_ / 2 < min_ns_ ? min_ns_ : ns_ / 2; }

 private:
  int64_t min_ns_, max_ns_, ns_;
};

}  // namespace afm
