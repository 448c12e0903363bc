#include "base/thread_team.h"

#include "base/error.h"

namespace afm {

void TeamBarrier::arrive_and_wait() {
  if (size_ == 1) return;
  const uint32_t phase = phase_.load(std::memory_order_acquire);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) == size_ - 1) {
    arrived_.store(0, std::memory_order_relaxed);
    // seq_cst pairs with a sleeper's sleepers_ increment and phase_ re-check.
    phase_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) != 0) futex_wake_all(phase_);
    return;
  }
  // Members arrive within microseconds of each other when each has a core; a member still
  // missing after kBarrierSpinNs is probably descheduled, and spinning would hold its core.
  constexpr int64_t kBarrierSpinNs = 50'000;
  const auto passed = [&] { return phase_.load(std::memory_order_acquire) != phase; };
  if (spin_until(passed, kBarrierSpinNs)) return;
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  while (phase_.load(std::memory_order_seq_cst) == phase) futex_wait(phase_, phase);
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
}

void ThreadTeam::run(const std::function<void(int, int)>& fn) {
  fn(member_, barrier_.size());
  barrier_.arrive_and_wait();
}

void ThreadTeam::once(const std::function<void()>& fn) {
  if (member_ == 0) fn();
  barrier_.arrive_and_wait();
}

TeamSeat team_seat(int thread, int n_threads, int n_teams) {
  AFM_CHECK(n_teams >= 1 && n_threads >= n_teams && thread < n_threads);
  for (int t = 0; t < n_teams; ++t) {
    const Range r = split_range(n_threads, t, n_teams);
    if (thread >= r.begin && thread < r.end) {
      return {t, static_cast<int>(thread - r.begin), static_cast<int>(r.end - r.begin)};
    }
  }
  AFM_CHECK(false);
  return {};
}

}  // namespace afm
