// Internal to the kernels library: ParallelFor that also accepts a null pool (run inline).
// Thread safety: as ThreadPool::ParallelFor.
#pragma once

#include <cstdint>

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

}  // namespace ds::kernels::internal
