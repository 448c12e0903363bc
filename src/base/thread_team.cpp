#include "base/thread_team.h"

#include <sched.h>

#include "base/error.h"

namespace afm {

void TeamBarrier::arrive_and_wait() {
  if (size_ == 1) return;
  const uint32_t phase = phase_.load(std::memory_order_acquire);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) == size_ - 1) {
    arrived_.store(0, std::memory_order_relaxed);
    phase_.fetch_add(1, std::memory_order_acq_rel);
    return;
  }
  // Teams are short-lived (one track block); yield after a while in case a member is
  // descheduled on an oversubscribed machine.
  for (int spins = 0; phase_.load(std::memory_order_acquire) == phase; ++spins) {
    if (spins > 20000) sched_yield();
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
  }
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
