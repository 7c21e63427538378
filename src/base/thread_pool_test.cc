#include "base/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace ds {
namespace {

TEST(ThreadPoolTest, CoversEveryIndexExactlyOnce) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    for (int64_t n : {0, 1, 5, 17, 1000}) {
      std::vector<std::atomic<int>> hits(n);
      pool.ParallelFor(n, 3, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) hits[i]++;
      });
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
    }
  }
}

TEST(ThreadPoolTest, ManyConsecutiveLoops) {
  ThreadPool pool(4);
  std::atomic<int64_t> sum{0};
  for (int iter = 0; iter < 2000; ++iter) {
    pool.ParallelFor(64, 1, [&](int64_t b, int64_t e) { sum += e - b; });
  }
  EXPECT_EQ(sum.load(), 2000 * 64);
}

// Workers that went to sleep between loops are woken for the next one.
TEST(ThreadPoolTest, LoopsAfterIdlePeriodsUseEveryWorker) {
  ThreadPool pool(3);
  for (int round = 0; round < 3; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::mutex mu;
    std::set<std::thread::id> threads;
    std::atomic<int> arrived{0};
    pool.ParallelFor(3, 1, [&](int64_t, int64_t) {
      {
        std::lock_guard<std::mutex> lock(mu);
        threads.insert(std::this_thread::get_id());
      }
      // Every chunk waits for the others, so the loop finishes only if all three threads ran.
      arrived.fetch_add(1);
      while (arrived.load() < 3) std::this_thread::yield();
    });
    EXPECT_EQ(threads.size(), 3u) << "round " << round;
  }
}

}  // namespace
}  // namespace ds
