#include "kernels/kv_stream.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace ds::kernels::internal {
namespace {

// Records the lines a stream asks for, as offsets from a buffer's start.
struct RecordLines {
  const uint8_t* base;
  std::vector<int64_t>* lines;
  void operator()(const void* line) const {
    lines->push_back(static_cast<const uint8_t*>(line) - base);
  }
};

struct StreamFixture {
  alignas(64) uint8_t buffer[64 * 64] = {};
  std::vector<int64_t> lines;
  KvStream<RecordLines> stream{RecordLines{buffer, &lines}};
};

TEST(KvStreamTest, AsksForEveryLineOfStridedRunsThenOfAdjacentOnesOnce) {
  StreamFixture f;
  // K: three runs of 100 bytes, 256 apart, from byte 10 (lines 0-1, 4-5, 8-9); V: four adjacent
  // runs of 48 bytes from byte 1024 (lines 16-18); V's scales: two runs of 32 bytes, 512 apart,
  // from byte 2048 (lines 32 and 40).
  const StreamRuns k{f.buffer + 10, 256, 3, 100};
  const StreamRuns v{f.buffer + 1024, 48, 4, 48};
  const StreamRuns v_scales{f.buffer + 2048, 512, 2, 32};
  f.stream.Begin(k, v, v_scales, 88.0f);  // 11 lines: one every 8 units
  for (int i = 0; i < 88; ++i) f.stream.Advance(1.0f);
  const std::vector<int64_t> want = {0, 64, 256, 320, 512, 576, 1024, 1088, 1152, 2048, 2560};
  EXPECT_EQ(f.lines, want);
}

TEST(KvStreamTest, AsksForTheLinesInProportionToTheWork) {
  StreamFixture f;
  const StreamRuns k{f.buffer, 64, 20, 64};  // 20 lines
  const StreamRuns v{f.buffer + 2048, 64, 20, 64};
  f.stream.Begin(k, v, StreamRuns{}, 320.0f);  // a line every 8 units
  f.stream.Advance(80.0f);
  EXPECT_EQ(f.lines.size(), 10u);
  f.stream.Advance(160.0f);
  EXPECT_EQ(f.lines.size(), 30u);
  // Work past the block's asks for nothing past its bytes.
  f.stream.Advance(1000.0f);
  ASSERT_EQ(f.lines.size(), 40u);
  EXPECT_EQ(f.lines.back(), 2048 + 19 * 64);
}

TEST(KvStreamTest, AnEmptyNextBlockAsksForNothing) {
  StreamFixture f;
  f.stream.Begin(StreamRuns{f.buffer, 64, 0, 64}, StreamRuns{f.buffer, 64, 0, 64},
                 StreamRuns{f.buffer, 64, 0, 64}, 10.0f);
  f.stream.Advance(10.0f);
  EXPECT_TRUE(f.lines.empty());
}

TEST(KvStreamTest, EachBlockStartsItsOwnRunsAfresh) {
  StreamFixture f;
  f.stream.Begin(StreamRuns{f.buffer, 64, 4, 64}, StreamRuns{}, StreamRuns{}, 4.0f);
  f.stream.Advance(2.0f);  // half of the first block's lines: 0 and 64
  f.stream.Begin(StreamRuns{f.buffer + 1024, 64, 2, 64}, StreamRuns{}, StreamRuns{}, 2.0f);
  f.stream.Advance(2.0f);
  const std::vector<int64_t> want = {0, 64, 1024, 1088};
  EXPECT_EQ(f.lines, want);
}

}  // namespace
}  // namespace ds::kernels::internal
