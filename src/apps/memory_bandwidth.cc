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
constexpr int kPassesPerPattern = 3;

// How a reading asks for the lines ahead of its loads. No one pattern reads fastest everywhere,
// and a floor must not sit below what the machine can read, so a reading takes the best of all:
// - kNonTemporal8K, one non-temporal request 8 KiB ahead: on a Zen 4 machine, interleaved
//   readings 63.8-68.0 GB/s where the hardware prefetchers alone gave 57.6-61.4;
// - kLikeDecodeKernels, the one-token kernels' requests (16 KiB ahead into L2, 4 KiB ahead
//   non-temporal);
// - kHardwareOnly: on an Intel Xeon machine (family 6, model 207; 2 threads), a stand-alone
//   loop read 29.9 GB/s so, 30.3 with the decode kernels' requests and 12.2 with the one
//   non-temporal request; this meter, which then used that one alone, read 17.0-19.6 GB/s, and
//   that machine's decodes ran at 93.6-162.6% of such a floor (most faster than memory).
enum class Pattern { kNonTemporal8K, kLikeDecodeKernels, kHardwareOnly };
constexpr Pattern kPatterns[] = {Pattern::kNonTemporal8K, Pattern::kLikeDecodeKernels,
                                 Pattern::kHardwareOnly};

// A cache line's 16 floats in independent accumulators let the compiler vectorise and keep loads
// in flight.
template <Pattern kPattern>
float SumRange(const float* data, int64_t begin, int64_t end) {
  constexpr int64_t kLineFloats = 16;
  constexpr int64_t kBytesPerFloat = sizeof(float);
  float acc[kLineFloats] = {};
  int64_t i = begin;
  for (; i + kLineFloats <= end; i += kLineFloats) {
    // Past the buffer's end these requests are harmless: a prefetch never faults.
    if constexpr (kPattern == Pattern::kNonTemporal8K) {
      __builtin_prefetch(data + i + 8192 / kBytesPerFloat, /*rw=*/0, /*locality=*/0);
    }
    if constexpr (kPattern == Pattern::kLikeDecodeKernels) {
      __builtin_prefetch(data + i + 16384 / kBytesPerFloat, /*rw=*/0, /*locality=*/2);
      __builtin_prefetch(data + i + 4096 / kBytesPerFloat, /*rw=*/0, /*locality=*/0);
    }
    for (int j = 0; j < kLineFloats; ++j) acc[j] += data[i + j];
  }
  for (; i < end; ++i) acc[0] += data[i];
  float total = 0;
  for (float a : acc) total += a;
  return total;
}

float SumRangeWith(Pattern pattern, const float* data, int64_t begin, int64_t end) {
  switch (pattern) {
    case Pattern::kNonTemporal8K:
      return SumRange<Pattern::kNonTemporal8K>(data, begin, end);
    case Pattern::kLikeDecodeKernels:
      return SumRange<Pattern::kLikeDecodeKernels>(data, begin, end);
    case Pattern::kHardwareOnly:
      return SumRange<Pattern::kHardwareOnly>(data, begin, end);
  }
  return 0;
}

}  // namespace

ReadBandwidthMeter::ReadBandwidthMeter() : buffer_(kBufferBytes / sizeof(float), 1.0f) {}

double ReadBandwidthMeter::MeasureGBps(ThreadPool* pool) const {
  const int64_t n = static_cast<int64_t>(buffer_.size());
  std::mutex mu;
  float total = 0;  // read at the end so the loads cannot be optimised away
  double best = 0;
  for (int pass = 0; pass < kPassesPerPattern; ++pass) {
    for (Pattern pattern : kPatterns) {
      Clock::time_point start = Clock::now();
      pool->ParallelFor(n, n / pool->num_threads() + 1, [&](int64_t begin, int64_t end) {
        float sum = SumRangeWith(pattern, buffer_.data(), begin, end);
        std::lock_guard<std::mutex> lock(mu);
        total += sum;
      });
      double seconds = SecondsSince(start);
      best = std::max(best, kBufferBytes / seconds / 1e9);
    }
  }
  volatile float sink = total;
  (void)sink;
  return best;
}

}  // namespace ds::apps
