#include "base/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "base/thread_team.h"

namespace afm {
namespace {

TEST(ThreadPool, EveryThreadRunsEveryJobOnce) {
  for (int n : {1, 2, 3, 5}) {
    ThreadPool pool(n);
    std::vector<std::atomic<int>> hits(n);
    for (int job = 0; job < 1000; ++job) {
      pool.run([&](int index, int count) {
        EXPECT_EQ(count, n);
        hits[index].fetch_add(1);
      });
    }
    for (int i = 0; i < n; ++i) EXPECT_EQ(hits[i].load(), 1000);
  }
}

TEST(ThreadPool, JobPostedBeforeWorkersStartIsNotLost) {
  for (int i = 0; i < 200; ++i) {
    ThreadPool pool(3);
    std::atomic<int> ran{0};
    pool.run([&](int, int) { ran.fetch_add(1); });
    EXPECT_EQ(ran.load(), 3);
  }
}

// Workers slower than the caller's spin budget: the caller sleeps and the last worker wakes it.
// Then idle gaps longer than a worker's spin budget: the workers sleep and the next job wakes
// them. Every job still runs on every thread exactly once, and its writes are seen after run().
TEST(ThreadPool, SleepingCallerAndSleepingWorkersLoseNoJob) {
  ThreadPool pool(3);
  std::vector<int> writes(3, 0);
  for (int job = 1; job <= 40; ++job) {
    pool.run([&](int index, int) {
      if (index != 0 && job % 2 == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
      writes[index] = job;  // plain writes: run() must order them before it returns
    });
    for (int i = 0; i < 3; ++i) ASSERT_EQ(writes[i], job) << "thread " << i;
    if (job % 5 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// More pool threads than cores (four pools of 3 on this machine at once): slow, never wrong.
TEST(ThreadPool, OversubscribedPoolsStillRunEveryJobOnce) {
  std::vector<std::thread> users;
  std::atomic<int> total{0};
  for (int u = 0; u < 4; ++u) {
    users.emplace_back([&] {
      ThreadPool pool(3);
      for (int job = 0; job < 300; ++job) pool.run([&](int, int) { total.fetch_add(1); });
    });
  }
  for (auto& t : users) t.join();
  EXPECT_EQ(total.load(), 4 * 300 * 3);
}

// A team member far behind the others: they sleep at the barrier and the last arrival wakes
// them; the barrier is reusable phase after phase.
TEST(TeamBarrier, LateMemberWakesTheSleepers) {
  constexpr int kMembers = 3, kPhases = 20;
  TeamBarrier barrier(kMembers);
  std::vector<int> stamp(kMembers, 0);
  std::vector<std::thread> members;
  std::atomic<bool> ordered{true};
  for (int m = 0; m < kMembers; ++m) {
    members.emplace_back([&, m] {
      for (int phase = 1; phase <= kPhases; ++phase) {
        if (m == kMembers - 1 && phase % 4 == 0) {
          std::this_thread::sleep_for(std::chrono::microseconds(400));
        }
        stamp[m] = phase;
        barrier.arrive_and_wait();
        for (int other = 0; other < kMembers; ++other) {
          if (stamp[other] < phase) ordered = false;
        }
        barrier.arrive_and_wait();  // nobody stamps the next phase before all have checked
      }
    });
  }
  for (auto& t : members) t.join();
  EXPECT_TRUE(ordered.load());
}

TEST(ThreadPool, SplitRangeCoversEverythingOnce) {
  for (int64_t n : {0, 1, 7, 64, 1000}) {
    for (int count : {1, 2, 3, 8}) {
      for (int64_t granule : {1, 16}) {
        int64_t next = 0;
        for (int i = 0; i < count; ++i) {
          const Range r = split_range(n, i, count, granule);
          EXPECT_EQ(r.begin, next);
          EXPECT_LE(r.begin, r.end);
          if (r.end < n) {
            EXPECT_EQ(r.end % granule, 0);
          }
          next = r.end;
        }
        EXPECT_EQ(next, n);
      }
    }
  }
}

}  // namespace
}  // namespace afm
