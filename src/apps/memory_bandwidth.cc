#include "apps/memory_bandwidth.h"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <vector>

#include "base/clock.h"
#include "base/large_buffer.h"

namespace ds::apps {
namespace {

constexpr int64_t kBufferBytes = int64_t{1} << 30;  // far past any last-level cache
constexpr int kPasses = 5;

// A cache line's 16 floats in independent accumulators let the compiler vectorise and keep loads
// in flight. Every line is asked for 8 KiB ahead, as the decode kernels ask for their weights
// (non-temporal): left to the hardware prefetchers, readings were lower than what those kernels
// then streamed (decodes at 100-103% of their floor); interleaved readings on one machine went
// from 57.6-61.4 GB/s to 63.8-68.0.
float SumRange(const float* data, int64_t begin, int64_t end) {
  constexpr int64_t kLineFloats = 16, kAheadFloats = 2048;
  float acc[kLineFloats] = {};
  int64_t i = begin;
  for (; i + kLineFloats <= end; i += kLineFloats) {
    __builtin_prefetch(data + i + kAheadFloats, /*rw=*/0, /*locality=*/0);
    for (int j = 0; j < kLineFloats; ++j) acc[j] += data[i + j];
  }
  for (; i < end; ++i) acc[0] += data[i];
  float total = 0;
  for (float a : acc) total += a;
  return total;
}

}  // namespace

ReadBandwidthMeter::ReadBandwidthMeter() : buffer_(kBufferBytes / sizeof(float), 1.0f) {}

double ReadBandwidthMeter::MeasureGBps(ThreadPool* pool) const {
  const int64_t n = static_cast<int64_t>(buffer_.size());
  std::mutex mu;
  float total = 0;  // read at the end so the loads cannot be optimised away
  double best = 0;
  for (int pass = 0; pass < kPasses; ++pass) {
    Clock::time_point start = Clock::now();
    pool->ParallelFor(n, n / pool->num_threads() + 1, [&](int64_t begin, int64_t end) {
      float sum = SumRange(buffer_.data(), begin, end);
      std::lock_guard<std::mutex> lock(mu);
      total += sum;
    });
    double seconds = SecondsSince(start);
    best = std::max(best, kBufferBytes / seconds / 1e9);
  }
  volatile float sink = total;
  (void)sink;
  return best;
}

}  // namespace ds::apps
