#include "base/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

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

TEST(ThreadPool, SplitRangeCoversEverythingOnce) {
  for (int64_t n : {0, 1, 7, 64, 1000}) {
    for (int count : {1, 2, 3, 8}) {
      for (int64_t granule : {1, 16}) {
        int64_t next = 0;
        for (int i = 0; i < count; ++i) {
          const Range r = split_range(n, i, count, granule);
          EXPECT_EQ(r.begin, next);
          EXPECT_LE(r.begin, r.end);
          if (r.end < n) EXPECT_EQ(r.end % granule, 0);
          next = r.end;
        }
        EXPECT_EQ(next, n);
      }
    }
  }
}

}  // namespace
}  // namespace afm
