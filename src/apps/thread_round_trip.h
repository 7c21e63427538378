// How long a cache line written by one of the pool's threads takes to reach another and come
// back. On a virtual machine the host decides where the vCPUs run, and on the Zen 4 machines of
// docs/perf/history.md ("Measured") the two placements read apart: two vCPUs sharing a CCX's L3
// passed a line there and back in 49-97 ns and read 31-38 GB/s of memory between them; on
// different CCDs, 330-460 ns and 52-69 GB/s (each die has its own link to memory). Every parallel
// pass of a decode step starts and ends with such exchanges, so bench-model prints this beside
// the bandwidth it sets decode against.
#pragma once

#include <optional>

#include "base/thread_pool.h"

namespace ds::apps {

// The median of several batches of round trips between the pool's threads 0 and 1, in
// nanoseconds; nullopt for a pool of one thread.
std::optional<double> MeasureThreadRoundTripNs(ThreadPool* pool);

}  // namespace ds::apps
