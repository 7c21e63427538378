#include "tensor/key_tiles.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace ds::tensor {
namespace {

std::vector<uint8_t> PatternRows(int64_t n_rows, const KeyShape& shape) {
  std::vector<uint8_t> rows(static_cast<size_t>(n_rows * shape.row_bytes()));
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<uint8_t>(i * 131 + 7);
  return rows;
}

TEST(KeyTilesTest, TilesQ8_0HeadsOfWholeBlockPairsOnlyWhereWanted) {
  EXPECT_TRUE((KeyShape{DType::kQ8_0, 2, 128, true}).tiled());
  EXPECT_TRUE((KeyShape{DType::kQ8_0, 4, 64, true}).tiled());
  EXPECT_FALSE((KeyShape{DType::kQ8_0, 2, 128, false}).tiled());
  EXPECT_FALSE((KeyShape{DType::kQ8_0, 2, 96, true}).tiled());
  EXPECT_FALSE((KeyShape{DType::kF32, 2, 128, true}).tiled());
}

TEST(KeyTilesTest, CacheBytesRoundUpToWholeTiles) {
  const KeyShape tiled{DType::kQ8_0, 2, 128, true};
  EXPECT_EQ(tiled.row_bytes(), 2 * 136);
  EXPECT_EQ(tiled.CacheBytes(0), 0);
  EXPECT_EQ(tiled.CacheBytes(1), 16 * 272);
  EXPECT_EQ(tiled.CacheBytes(16), 16 * 272);
  EXPECT_EQ(tiled.CacheBytes(17), 32 * 272);
  const KeyShape rows{DType::kQ8_0, 2, 96, true};
  EXPECT_EQ(rows.CacheBytes(17), 17 * rows.row_bytes());
}

// The documented layout, byte for byte: dword c of head h of position p at
// KeyTileHead(p, h) + (c * 16 + p % 16) * 4, every byte's top bit flipped.
TEST(KeyTilesTest, TiledPositionsLieByDword) {
  const KeyShape shape{DType::kQ8_0, 3, 64, true};
  const int64_t n = 40, first = 5;
  const std::vector<uint8_t> rows = PatternRows(n, shape);
  std::vector<uint8_t> cache(static_cast<size_t>(shape.CacheBytes(first + n)), 0);
  PutKeyRows(rows.data(), first, n, shape, cache.data());
  for (int64_t i = 0; i < n; ++i) {
    const int64_t p = first + i;
    for (int64_t h = 0; h < shape.n_kv_heads; ++h) {
      const uint8_t* head = KeyTileHead(cache.data(), shape, p, h);
      for (int64_t c = 0; c < shape.slice_bytes() / 4; ++c) {
        const uint8_t* row_dword =
            rows.data() + i * shape.row_bytes() + h * shape.slice_bytes() + 4 * c;
        for (int byte = 0; byte < 4; ++byte) {
          ASSERT_EQ(head[(c * 16 + p % 16) * 4 + byte], row_dword[byte] ^ 0x80)
              << "position " << p << " head " << h << " dword " << c << " byte " << byte;
        }
      }
    }
  }
}

TEST(KeyTilesTest, RowsComeBackAsTheyWent) {
  for (const KeyShape& shape :
       {KeyShape{DType::kQ8_0, 2, 128, true}, KeyShape{DType::kQ8_0, 2, 128, false},
        KeyShape{DType::kQ8_0, 2, 96, true}, KeyShape{DType::kF32, 2, 8, true}}) {
    const int64_t n = 37, first = 3;
    const std::vector<uint8_t> rows = PatternRows(n, shape);
    std::vector<uint8_t> cache(static_cast<size_t>(shape.CacheBytes(first + n)), 0);
    PutKeyRows(rows.data(), first, n, shape, cache.data());
    std::vector<uint8_t> back(rows.size());
    GetKeyRows(cache.data(), first, n, shape, back.data());
    EXPECT_EQ(back, rows) << shape.head_dim;
    std::vector<uint8_t> slice(static_cast<size_t>(shape.slice_bytes()));
    GetKeySlice(cache.data(), first + 20, 1, shape, slice.data());
    const uint8_t* position_20 = rows.data() + 20 * shape.row_bytes();
    EXPECT_EQ(0, std::memcmp(slice.data(), position_20 + shape.slice_bytes(), slice.size()));
  }
}

TEST(KeyTilesTest, UntiledCachesHoldRows) {
  const KeyShape shape{DType::kQ8_0, 2, 96, true};
  const std::vector<uint8_t> rows = PatternRows(4, shape);
  std::vector<uint8_t> cache(static_cast<size_t>(shape.CacheBytes(6)), 0);
  PutKeyRows(rows.data(), 2, 4, shape, cache.data());
  EXPECT_EQ(0, std::memcmp(cache.data() + 2 * shape.row_bytes(), rows.data(), rows.size()));
}

}  // namespace
}  // namespace ds::tensor
