// How long a cache line written by one of the pool's threads takes to reach another and come
// back. On a virtual machine the host decides where the vCPUs run, and two vCPUs on one CCX (a
// shared L3) and on two dies read far apart, in this and in memory bandwidth (figures in
// docs/perf/history.md, "Measured"). Every parallel pass of a decode step starts and ends with
// such exchanges, so bench-model prints this beside the bandwidth it sets decode against.
#pragma once

#include <optional>

#include "base/thread_pool.h"

namespace ds::apps {

// The median of several batches of round trips between the pool's threads 0 and 1, in
// nanoseconds; nullopt for a pool of one thread.
std::optional<double> MeasureThreadRoundTripNs(ThreadPool* pool);

}  // namespace ds::apps
