#include "base/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
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

}  // namespace
}  // namespace ds
