// Internal to the kernels library: ParallelFor that also accepts a null pool (run inline), and
// one parallel pass over the ranges of several items.
// Thread safety: as ThreadPool::ParallelFor.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "base/thread_pool.h"

namespace ds::kernels::internal {

inline void ParallelRanges(ThreadPool* pool, int64_t n, int64_t grain,
                           FunctionRef<void(int64_t, int64_t)> fn) {
  if (n <= 0) return;
  if (pool == nullptr) {
    fn(0, n);
  } else {
    pool->ParallelFor(n, grain, fn);
  }
}

// Runs fn(item, begin, end) over the items' index ranges [0, count_i), all items in one parallel
// pass: `starts` holds the running sums of the counts (starts[0] = 0, one more entry than items).
inline void ForEachItemRange(ThreadPool* pool, const std::vector<int64_t>& starts, int64_t grain,
                             FunctionRef<void(size_t, int64_t, int64_t)> fn) {
  ParallelRanges(pool, starts.back(), grain, [&](int64_t b0, int64_t b1) {
    size_t i = std::upper_bound(starts.begin(), starts.end(), b0) - starts.begin() - 1;
    for (; i + 1 < starts.size() && starts[i] < b1; ++i) {
      const int64_t begin = std::max(b0, starts[i]) - starts[i];
      const int64_t end = std::min(b1, starts[i + 1]) - starts[i];
      if (begin < end) fn(i, begin, end);
    }
  });
}

}  // namespace ds::kernels::internal
