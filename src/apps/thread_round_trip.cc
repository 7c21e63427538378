#include "apps/thread_round_trip.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

namespace ds::apps {
namespace {

constexpr int kBatches = 7;
constexpr int64_t kRoundTripsPerBatch = 2000;

// Thread 0 writes an odd count, thread 1 answers with the next even one. Spun on with plain
// loads: a pause between them would add its own tens of nanoseconds to every trip.
struct alignas(64) Baton {
  std::atomic<int64_t> count{0};
  // Waits until count reads `value`. With more threads than free CPUs (tests run side by side)
  // the other thread may not be running: after a long spin the waiter hands over its CPU.
  void AwaitCount(int64_t value) const {
    for (int spins = 0; count.load(std::memory_order_acquire) != value; ++spins) {
      if (spins >= kSpinsBeforeYield) std::this_thread::yield();
    }
  }
  static constexpr int kSpinsBeforeYield = 1 << 16;
};

}  // namespace

std::optional<double> MeasureThreadRoundTripNs(ThreadPool* pool) {
  if (pool == nullptr || pool->num_threads() < 2) return std::nullopt;
  Baton baton;
  std::array<double, kBatches> batch_ns{};
  pool->OnEveryThread([&](int thread) {
    if (thread == 1) {
      for (int64_t i = 0; i < kBatches * kRoundTripsPerBatch; ++i) {
        baton.AwaitCount(2 * i + 1);
        baton.count.store(2 * i + 2, std::memory_order_release);
      }
    } else if (thread == 0) {
      for (int b = 0; b < kBatches; ++b) {
        const auto start = std::chrono::steady_clock::now();
        for (int64_t j = 0; j < kRoundTripsPerBatch; ++j) {
          const int64_t i = b * kRoundTripsPerBatch + j;
          baton.count.store(2 * i + 1, std::memory_order_release);
          baton.AwaitCount(2 * i + 2);
        }
        const std::chrono::duration<double, std::nano> took =
            std::chrono::steady_clock::now() - start;
        batch_ns[b] = took.count() / kRoundTripsPerBatch;
      }
    }
  });
  std::sort(batch_ns.begin(), batch_ns.end());
  return batch_ns[kBatches / 2];
}

}  // namespace ds::apps
