// A ThreadTeam is a slice of the threads inside one ThreadPool::run: the threads that work on
// one track of a Parallel-Track model. Each member constructs a ThreadTeam view with its index
// in the team; run(fn) calls fn(member, size) on this thread and then waits at the team's
// barrier, so the same op code that runs on a whole pool runs on a team.
//
// Contract (SPMD): every member calls the same sequence of run()s, and code between run()s
// must not write shared state (scratch is sized before the team starts). TeamBarrier is shared
// by the members; ThreadTeam is per member and cheap.
#pragma once

#include <atomic>
#include <cstdint>

#include "base/thread_pool.h"

namespace afm {

class TeamBarrier {
 public:
  explicit TeamBarrier(int size) : size_(size) {}
  int size() const { return size_; }
  // Returns when all `size` members have arrived; reusable.
  void arrive_and_wait();

 private:
  const int size_;
  std::atomic<int> arrived_{0};
  std::atomic<uint32_t> phase_{0};     // bumped by the last member to arrive
  std::atomic<uint32_t> sleepers_{0};  // members in futex_wait on phase_
};

class ThreadTeam final : public Workers {
 public:
  ThreadTeam(TeamBarrier& barrier, int member) : barrier_(barrier), member_(member) {}
  int size() const override { return barrier_.size(); }
  void run(const std::function<void(int thread_index, int n_threads)>& fn) override;
  void once(const std::function<void()>& fn) override;

 private:
  TeamBarrier& barrier_;
  int member_;
};

// How `n_threads` threads split into `n_teams` teams (sizes differ by at most one, team 0 the
// largest): the team of thread `thread` and its member index there.
struct TeamSeat {
  int team, member, team_size;
};
TeamSeat team_seat(int thread, int n_threads, int n_teams);

}  // namespace afm
