#include "base/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "base/allocation_count.h"

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

// Each thread index runs once per call, and on the same thread in every call, between
// ParallelFor loops too: the recurrence relies on it to find its heads' state in its own caches.
TEST(ThreadPoolTest, OnEveryThreadRunsEachIndexOnceOnAFixedThread) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    std::vector<std::thread::id> first(threads);
    for (int call = 0; call < 50; ++call) {
      std::vector<std::atomic<int>> hits(threads);
      std::vector<std::thread::id> ran_on(threads);
      pool.OnEveryThread([&](int t) {
        ASSERT_GE(t, 0);
        ASSERT_LT(t, threads);
        hits[t]++;
        ran_on[t] = std::this_thread::get_id();
      });
      if (call == 0) {
        first = ran_on;
        EXPECT_EQ(first[0], std::this_thread::get_id());
        EXPECT_EQ(std::set<std::thread::id>(first.begin(), first.end()).size(),
                  static_cast<size_t>(threads));
      }
      for (int t = 0; t < threads; ++t) {
        EXPECT_EQ(hits[t].load(), 1) << "threads=" << threads << " t=" << t;
        EXPECT_EQ(ran_on[t], first[t]) << "threads=" << threads << " t=" << t;
      }
      pool.ParallelFor(100, 1, [](int64_t, int64_t) {});
    }
  }
}

// No more ranges than n / grain rounded up; within each thread's share they shrink from its
// front to its back, so the ranges left for another thread to take at a loop's end are its
// smallest.
TEST(ThreadPoolTest, RangesShrinkTowardsTheEndOfEachShare) {
  ThreadPool pool(2);
  std::mutex mu;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  const auto record = [&](int64_t begin, int64_t end) {
    std::lock_guard<std::mutex> lock(mu);
    ranges.emplace_back(begin, end);
  };
  pool.ParallelFor(7, 3, record);
  EXPECT_LE(ranges.size(), 3u);  // 7 / 3 rounded up

  ranges.clear();
  constexpr int64_t kN = 1 << 20;
  pool.ParallelFor(kN, 1, record);
  std::sort(ranges.begin(), ranges.end());
  ASSERT_EQ(ranges.size(), 16u);
  for (size_t i = 0; i < ranges.size(); ++i) {
    EXPECT_EQ(ranges[i].first, i == 0 ? 0 : ranges[i - 1].second);
    if (i % 8 != 0) {
      EXPECT_LT(ranges[i].second - ranges[i].first, ranges[i - 1].second - ranges[i - 1].first)
          << "range " << i;
    }
  }
  EXPECT_EQ(ranges.back().second, kN);
  EXPECT_EQ(ranges[8].first, kN / 2);
}

// A decode step runs hundreds of loops; their lambdas capture more than std::function would
// keep inline, so a loop must not wrap its callable in one.
TEST(ThreadPoolTest, LoopsAllocateNothing) {
  ThreadPool pool(3);
  std::array<std::atomic<int64_t>, 4> sums{};
  int64_t a = 1, b = 2, c = 3, d = 4;
  const auto loop = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) sums[i % 4] += a + b + c + d + i;
  };
  pool.ParallelFor(1000, 10, loop);  // the workers' first loop
  const int64_t before = AllocationsSoFar();
  for (int iter = 0; iter < 100; ++iter) pool.ParallelFor(1000, 10, loop);
  EXPECT_EQ(AllocationsSoFar(), before);
  EXPECT_EQ(sums[0] + sums[1] + sums[2] + sums[3], 101 * (1000 * 10 + 999 * 1000 / 2));
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

// A thread held up in one range does not hold up the rest of its share: the others take them.
// The range of index 0 (the caller's first) returns only once every other index has run.
TEST(ThreadPoolTest, RangesOfAHeldUpThreadRunElsewhere) {
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    constexpr int64_t kN = 640;
    std::atomic<int64_t> others_done{0};
    int64_t first_range = 0;
    bool gave_up = false;
    pool.ParallelFor(kN, 1, [&](int64_t begin, int64_t end) {
      if (begin > 0) {
        others_done += end - begin;
        return;
      }
      first_range = end;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (others_done.load() < kN - first_range && !gave_up) {
        gave_up = std::chrono::steady_clock::now() > deadline;
        std::this_thread::yield();
      }
    });
    EXPECT_FALSE(gave_up) << "threads=" << threads;
    EXPECT_EQ(others_done.load(), kN - first_range) << "threads=" << threads;
  }
}

}  // namespace
}  // namespace ds
