#include "tensor/value_spans.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tensor/blocks.h"

namespace ds::tensor {
namespace {

std::vector<uint8_t> PatternRows(int64_t n_rows, const ValueShape& shape) {
  std::vector<uint8_t> rows(static_cast<size_t>(n_rows * shape.row_bytes()));
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<uint8_t>(i * 131 + 7);
  return rows;
}

TEST(ValueSpansTest, SpansQ8_0AndQ4_0HeadsOfWholeBlocksOnlyWhereWanted) {
  EXPECT_TRUE((ValueShape{DType::kQ8_0, 2, 128, true}).spanned());
  EXPECT_TRUE((ValueShape{DType::kQ8_0, 4, 96, true}).spanned());
  EXPECT_TRUE((ValueShape{DType::kQ4_0, 4, 96, true}).spanned());
  EXPECT_FALSE((ValueShape{DType::kQ4_0, 2, 128, false}).spanned());
  EXPECT_FALSE((ValueShape{DType::kQ4_1, 2, 128, true}).spanned());
  EXPECT_FALSE((ValueShape{DType::kQ8_0, 2, 128, false}).spanned());
  EXPECT_FALSE((ValueShape{DType::kF32, 2, 128, true}).spanned());
}

TEST(ValueSpansTest, CacheBytesRoundUpToWholeSpans) {
  const ValueShape spanned{DType::kQ8_0, 2, 128, true};
  EXPECT_EQ(spanned.row_bytes(), 2 * 136);
  EXPECT_EQ(spanned.span_bytes(), 256 * 272);
  EXPECT_EQ(spanned.CacheBytes(0), 0);
  EXPECT_EQ(spanned.CacheBytes(1), 256 * 272);
  EXPECT_EQ(spanned.CacheBytes(256), 256 * 272);
  EXPECT_EQ(spanned.CacheBytes(257), 512 * 272);
  const ValueShape rows{DType::kQ8_0, 2, 128, false};
  EXPECT_EQ(rows.CacheBytes(17), 17 * rows.row_bytes());
  const ValueShape four_bit{DType::kQ4_0, 2, 128, true};
  EXPECT_EQ(four_bit.row_bytes(), 2 * 72);
  EXPECT_EQ(four_bit.code_bytes(), 16);
  EXPECT_EQ(four_bit.plane_bytes(), 256 * 16);
  EXPECT_EQ(four_bit.CacheBytes(257), 512 * 144);
}

// The documented layout, byte for byte: code byte e of block b of head h of position p at
// ValuePlane(p, h, b) + (p % 256) / 4 * (4 code bytes) + 4 e + p % 4, its scale at
// ValueSpanScales(p, h, b)[p % 256]; the planes and then the scales fill each span.
template <class Block>
void ExpectPositionsInTilesOfFour(const ValueShape& shape) {
  constexpr int64_t kCodeBytes = sizeof(Block::qs);
  ASSERT_EQ(shape.code_bytes(), kCodeBytes);
  const int64_t n = 300, first = 5;
  const std::vector<uint8_t> rows = PatternRows(n, shape);
  std::vector<uint8_t> cache(static_cast<size_t>(shape.CacheBytes(first + n)), 0);
  PutValueRows(rows.data(), first, n, shape, cache.data());
  const int64_t slice_bytes = shape.slice_bytes();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t p = first + i;
    const int64_t in_span = p % kValueSpanPositions;
    for (int64_t h = 0; h < shape.n_kv_heads; ++h) {
      for (int64_t b = 0; b < shape.blocks_per_head(); ++b) {
        Block want;
        std::memcpy(&want, rows.data() + i * shape.row_bytes() + h * slice_bytes + b * sizeof want,
                    sizeof want);
        const int8_t* plane = ValuePlane(cache.data(), shape, p, h, b);
        EXPECT_EQ(reinterpret_cast<const uint8_t*>(plane),
                  cache.data() + p / 256 * shape.span_bytes() +
                      (h * 2 + b) * kValueSpanPositions * kCodeBytes);
        for (int64_t e = 0; e < kCodeBytes; ++e) {
          ASSERT_EQ(static_cast<uint8_t>(plane[in_span / 4 * 4 * kCodeBytes + 4 * e + p % 4]),
                    static_cast<uint8_t>(want.qs[e]))
              << "position " << p << " head " << h << " block " << b << " element " << e;
        }
        ASSERT_EQ(ValueSpanScales(cache.data(), shape, p, h, b)[in_span], want.d)
            << "position " << p << " head " << h << " block " << b;
      }
    }
  }
  EXPECT_EQ(reinterpret_cast<const uint8_t*>(ValueSpanScales(cache.data(), shape, 0, 0, 0)),
            cache.data() + 6 * kValueSpanPositions * kCodeBytes);
}

TEST(ValueSpansTest, SpannedPositionsLieInTilesOfFour) {
  ExpectPositionsInTilesOfFour<BlockQ8_0>(ValueShape{DType::kQ8_0, 3, 64, true});
  ExpectPositionsInTilesOfFour<BlockQ4_0>(ValueShape{DType::kQ4_0, 3, 64, true});
}

TEST(ValueSpansTest, RowsComeBackAsTheyWent) {
  for (const ValueShape& shape :
       {ValueShape{DType::kQ8_0, 2, 128, true}, ValueShape{DType::kQ8_0, 2, 128, false},
        ValueShape{DType::kQ8_0, 1, 96, true}, ValueShape{DType::kQ4_0, 2, 128, true},
        ValueShape{DType::kQ4_0, 2, 128, false}, ValueShape{DType::kQ4_0, 1, 96, true},
        ValueShape{DType::kF32, 2, 8, true}}) {
    const int64_t n = 290, first = 3;
    const std::vector<uint8_t> rows = PatternRows(n, shape);
    std::vector<uint8_t> cache(static_cast<size_t>(shape.CacheBytes(first + n)), 0);
    PutValueRows(rows.data(), first, n, shape, cache.data());
    std::vector<uint8_t> back(rows.size());
    GetValueRows(cache.data(), first, n, shape, back.data());
    EXPECT_EQ(back, rows) << DTypeName(shape.dtype) << " " << shape.head_dim;
    const int64_t slice_bytes = shape.slice_bytes();
    std::vector<uint8_t> slice(static_cast<size_t>(slice_bytes));
    const int64_t h = shape.n_kv_heads - 1;
    GetValueSlice(cache.data(), first + 260, h, shape, slice.data());
    const uint8_t* position_260 = rows.data() + 260 * shape.row_bytes();
    EXPECT_EQ(0, std::memcmp(slice.data(), position_260 + h * slice_bytes, slice.size()));
  }
}

TEST(ValueSpansTest, CachesWithoutSpansHoldRows) {
  const ValueShape shape{DType::kQ8_0, 2, 128, false};
  const std::vector<uint8_t> rows = PatternRows(4, shape);
  std::vector<uint8_t> cache(static_cast<size_t>(shape.CacheBytes(6)), 0);
  PutValueRows(rows.data(), 2, 4, shape, cache.data());
  EXPECT_EQ(0, std::memcmp(cache.data() + 2 * shape.row_bytes(), rows.data(), rows.size()));
}

}  // namespace
}  // namespace ds::tensor
