#include "base/large_buffer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

namespace ds {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

TEST(LargeBufferTest, LargeBuffersStartOnA2MiBBoundaryAndSmallOnesNeedNot) {
  for (size_t bytes : {2 * kMiB, 2 * kMiB + 1, 9 * kMiB + 123}) {
    void* buffer = AllocateLargeBuffer(bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer) % (2 * kMiB), 0u) << bytes;
    // Every byte asked for is writable, up to the last.
    static_cast<uint8_t*>(buffer)[bytes - 1] = 7;
    FreeLargeBuffer(buffer, bytes);
  }
  void* small = AllocateLargeBuffer(100);
  ASSERT_NE(small, nullptr);
  static_cast<uint8_t*>(small)[99] = 7;
  FreeLargeBuffer(small, 100);
}

// A vector growing from small to large storage, as a KV cache does, keeps its rows.
TEST(LargeBufferTest, AVectorKeepsItsContentsAcrossTheSwitchToLargeStorage) {
  std::vector<uint32_t, LargeBufferAllocator<uint32_t>> rows(1000);
  std::iota(rows.begin(), rows.end(), 0u);
  rows.resize(3 * kMiB / sizeof(uint32_t));
  for (uint32_t i = 0; i < 1000; ++i) ASSERT_EQ(rows[i], i);
  EXPECT_EQ(rows[1000], 0u);
  EXPECT_EQ(rows.back(), 0u);
  rows.resize(10);
  rows.shrink_to_fit();
  EXPECT_EQ(rows[9], 9u);
}

}  // namespace
}  // namespace ds
