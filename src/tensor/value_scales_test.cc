#include "tensor/value_scales.h"

#include <gtest/gtest.h>

#include <vector>

#include "tensor/blocks.h"
#include "tensor/dtype.h"

namespace ds::tensor {
namespace {

TEST(ValueScalesTest, RoomIsWholeGroupsOfEveryBlock) {
  EXPECT_EQ(ValueScalesSize(0, 256), 0);
  EXPECT_EQ(ValueScalesSize(1, 256), 8 * kValueScalePositions);
  EXPECT_EQ(ValueScalesSize(kValueScalePositions, 256), 8 * kValueScalePositions);
  EXPECT_EQ(ValueScalesSize(kValueScalePositions + 1, 64), 2 * 2 * kValueScalePositions);
}

// The documented layout: block b of position p at (p / 256 * n_blocks + b) * 256 + p % 256, for
// rows written from a position other than 0 and across a group's end.
TEST(ValueScalesTest, ScalesLieByGroupThenBlockThenPosition) {
  constexpr int64_t kRowFloats = 96, kBlocks = kRowFloats / kQK, kFirst = 250, kCount = 20;
  std::vector<BlockQ8_0> rows(kCount * kBlocks);
  for (size_t i = 0; i < rows.size(); ++i) rows[i].d = static_cast<uint16_t>(1000 + i);
  std::vector<uint16_t> scales(ValueScalesSize(kFirst + kCount, kRowFloats), 0);
  PutValueScales(reinterpret_cast<const uint8_t*>(rows.data()), kFirst, kCount, kRowFloats,
                 scales.data());
  int64_t written = 0;
  for (int64_t i = 0; i < kCount; ++i) {
    const int64_t p = kFirst + i;
    for (int64_t b = 0; b < kBlocks; ++b) {
      const int64_t at = (p / kValueScalePositions * kBlocks + b) * kValueScalePositions +
                         p % kValueScalePositions;
      EXPECT_EQ(scales[at], rows[i * kBlocks + b].d) << "position " << p << " block " << b;
    }
  }
  for (uint16_t s : scales) written += s != 0;
  EXPECT_EQ(written, kCount * kBlocks);  // nothing else touched
}

}  // namespace
}  // namespace ds::tensor
