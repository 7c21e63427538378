#include "tensor/key_tiles.h"

#include <cstring>

#include "tensor/blocks.h"

namespace ds::tensor {
namespace {

// Where the first dword of head h's slice of position p lies in a tiled cache (dword c lies
// c * kKeyTilePositions dwords on).
int64_t LaneOffset(const KeyShape& shape, int64_t p, int64_t h) {
  const int64_t tile = p / kKeyTilePositions;
  return (tile * kKeyTilePositions * shape.n_kv_heads + h * kKeyTilePositions) *
             shape.slice_bytes() +
         p % kKeyTilePositions * 4;
}

// A dword of a row as a tile holds it, and back: every byte's top bit flipped.
void CopyFlipped(const uint8_t* from, uint8_t* to) {
  for (int i = 0; i < 4; ++i) to[i] = from[i] ^ 0x80;
}

}  // namespace

bool KeyShape::tiled() const {
  return tiles_wanted && dtype == DType::kQ8_0 && head_dim % (2 * kQK) == 0;
}

int64_t KeyShape::CacheBytes(int64_t n_positions) const {
  if (!tiled()) return n_positions * row_bytes();
  const int64_t tiles = (n_positions + kKeyTilePositions - 1) / kKeyTilePositions;
  return tiles * kKeyTilePositions * row_bytes();
}

const uint8_t* KeyTileHead(const uint8_t* cache, const KeyShape& shape, int64_t p, int64_t h) {
  return cache + LaneOffset(shape, p - p % kKeyTilePositions, h);
}

void PutKeyRows(const uint8_t* rows, int64_t first, int64_t count, const KeyShape& shape,
                uint8_t* cache) {
  if (!shape.tiled()) return internal::PutPlainRows(rows, first, count, shape, cache);
  const int64_t row_bytes = shape.row_bytes();
  const int64_t slice_bytes = shape.slice_bytes();
  for (int64_t i = 0; i < count; ++i) {
    const uint8_t* row = rows + i * row_bytes;
    for (int64_t h = 0; h < shape.n_kv_heads; ++h) {
      uint8_t* lane = cache + LaneOffset(shape, first + i, h);
      for (int64_t c = 0; c < slice_bytes / 4; ++c) {
        CopyFlipped(row + h * slice_bytes + 4 * c, lane + c * kKeyTilePositions * 4);
      }
    }
  }
}

void GetKeyRows(const uint8_t* cache, int64_t first, int64_t count, const KeyShape& shape,
                uint8_t* rows) {
  if (!shape.tiled()) return internal::GetPlainRows(cache, first, count, shape, rows);
  internal::GatherRows(
      first, count, shape,
      [&](int64_t p, int64_t h, uint8_t* slice) { GetKeySlice(cache, p, h, shape, slice); }, rows);
}

void GetKeySlice(const uint8_t* cache, int64_t p, int64_t h, const KeyShape& shape,
                 uint8_t* slice) {
  if (!shape.tiled()) return internal::GetPlainSlice(cache, p, h, shape, slice);
  const int64_t slice_bytes = shape.slice_bytes();
  const uint8_t* lane = cache + LaneOffset(shape, p, h);
  for (int64_t c = 0; c < slice_bytes / 4; ++c) {
    CopyFlipped(lane + c * kKeyTilePositions * 4, slice + 4 * c);
  }
}

}  // namespace ds::tensor
