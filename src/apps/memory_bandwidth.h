// Measures the machine's sustained memory read bandwidth, the floor every decode figure is
// compared with: decode must stream all active weights from memory once per token.
#pragma once

#include <vector>

#include "base/large_buffer.h"
#include "base/thread_pool.h"

namespace ds::apps {

// Holds a buffer far larger than the caches, written once, so that bench-model's readings (one
// at the start, two around each decode test) do not each map and zero a gigabyte.
class ReadBandwidthMeter {
 public:
  ReadBandwidthMeter();
  // Best of several passes summing the buffer, split across the pool, each asking for the lines
  // ahead of its loads in one of a few ways.
  double MeasureGBps(ThreadPool* pool) const;

 private:
  // On the pages the weights get (gguf::Residency::kHugePages), so the floor a decode rate is
  // set against is not lowered by page walks the weights do not pay.
  std::vector<float, LargeBufferAllocator<float>> buffer_;
};

}  // namespace ds::apps
