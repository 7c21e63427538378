// Measures the machine's sustained memory read bandwidth, the floor every decode figure is
// compared with: decode must stream all active weights from memory once per token.
#pragma once

#include "base/thread_pool.h"

namespace ds::apps {

// Best of several passes summing a buffer far larger than the caches, split across the pool.
double MeasureReadBandwidthGBps(ThreadPool* pool);

}  // namespace ds::apps
