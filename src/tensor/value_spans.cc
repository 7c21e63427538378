#include "tensor/value_spans.h"

#include <cstring>

#include "tensor/blocks.h"

namespace ds::tensor {
namespace {

// A spanned cache's sizes, worked out once a call: each asks for the dtype's row size, which is
// out of line, and the block copies below would otherwise ask for it at every code byte.
struct SpanGeometry {
  explicit SpanGeometry(const ValueShape& shape)
      : block_bytes(RowBytes(shape.dtype, kQK)),
        code_bytes(block_bytes - static_cast<int64_t>(sizeof(uint16_t))),
        plane_bytes(kValueSpanPositions * code_bytes),
        blocks_per_row(shape.n_kv_heads * shape.blocks_per_head()),
        span_bytes(kValueSpanPositions * blocks_per_row * block_bytes) {}

  int64_t block_bytes;     // of a block as a row holds it: its fp16 scale, then its code bytes
  int64_t code_bytes;      // of one block's codes of one position
  int64_t plane_bytes;     // one block's codes of a span's positions
  int64_t blocks_per_row;  // the KV heads' blocks one after another
  int64_t span_bytes;
};

int64_t SpanOffset(const SpanGeometry& geometry, int64_t p) {
  return p / kValueSpanPositions * geometry.span_bytes;
}

// Block b of the row of position p: its code byte e lies at the plane's
// (p % span) / 4 * (4 * code bytes) + e * 4 + p % 4.
int64_t CodeOffset(const SpanGeometry& geometry, int64_t p, int64_t row_block) {
  const int64_t in_span = p % kValueSpanPositions;
  return row_block * geometry.plane_bytes +
         in_span / kValueTilePositions * kValueTilePositions * geometry.code_bytes +
         in_span % kValueTilePositions;
}

int64_t ScaleIndex(const SpanGeometry& geometry, int64_t p, int64_t row_block) {
  return geometry.blocks_per_row * geometry.plane_bytes / static_cast<int64_t>(sizeof(uint16_t)) +
         row_block * kValueSpanPositions + p % kValueSpanPositions;
}

// A block as a row holds it (BlockQ8_0 and BlockQ4_0 alike): its fp16 scale, then its code bytes.
void PutBlock(const uint8_t* block, const SpanGeometry& geometry, int64_t p, int64_t row_block,
              uint8_t* cache) {
  uint8_t* span = cache + SpanOffset(geometry, p);
  uint8_t* codes = span + CodeOffset(geometry, p, row_block);
  const uint8_t* block_codes = block + sizeof(uint16_t);
  for (int64_t e = 0; e < geometry.code_bytes; ++e) codes[e * kValueTilePositions] = block_codes[e];
  std::memcpy(span + ScaleIndex(geometry, p, row_block) * sizeof(uint16_t), block,
              sizeof(uint16_t));
}

void GetBlock(const uint8_t* cache, const SpanGeometry& geometry, int64_t p, int64_t row_block,
              uint8_t* block) {
  const uint8_t* span = cache + SpanOffset(geometry, p);
  const uint8_t* codes = span + CodeOffset(geometry, p, row_block);
  uint8_t* block_codes = block + sizeof(uint16_t);
  for (int64_t e = 0; e < geometry.code_bytes; ++e) block_codes[e] = codes[e * kValueTilePositions];
  std::memcpy(block, span + ScaleIndex(geometry, p, row_block) * sizeof(uint16_t),
              sizeof(uint16_t));
}

}  // namespace

bool ValueShape::spanned() const {
  return spans_wanted && (dtype == DType::kQ8_0 || dtype == DType::kQ4_0) && head_dim % kQK == 0;
}

int64_t ValueShape::blocks_per_head() const { return head_dim / kQK; }

int64_t ValueShape::code_bytes() const { return SpanGeometry(*this).code_bytes; }

int64_t ValueShape::plane_bytes() const { return SpanGeometry(*this).plane_bytes; }

int64_t ValueShape::span_bytes() const { return SpanGeometry(*this).span_bytes; }

int64_t ValueShape::CacheBytes(int64_t n_positions) const {
  if (!spanned()) return n_positions * row_bytes();
  const int64_t spans = (n_positions + kValueSpanPositions - 1) / kValueSpanPositions;
  return spans * span_bytes();
}

const int8_t* ValuePlane(const uint8_t* cache, const ValueShape& shape, int64_t p, int64_t h,
                         int64_t b) {
  const SpanGeometry geometry(shape);
  const uint8_t* span = cache + SpanOffset(geometry, p);
  return reinterpret_cast<const int8_t*>(
      span + (h * shape.blocks_per_head() + b) * geometry.plane_bytes);
}

const uint16_t* ValueSpanScales(const uint8_t* cache, const ValueShape& shape, int64_t p,
                                int64_t h, int64_t b) {
  const SpanGeometry geometry(shape);
  const uint8_t* span = cache + SpanOffset(geometry, p);
  return reinterpret_cast<const uint16_t*>(span) +
         ScaleIndex(geometry, 0, h * shape.blocks_per_head() + b);
}

void PutValueRows(const uint8_t* rows, int64_t first, int64_t count, const ValueShape& shape,
                  uint8_t* cache) {
  if (!shape.spanned()) return internal::PutPlainRows(rows, first, count, shape, cache);
  const SpanGeometry geometry(shape);
  const int64_t row_bytes = shape.row_bytes();
  for (int64_t i = 0; i < count; ++i) {
    for (int64_t b = 0; b < geometry.blocks_per_row; ++b) {
      PutBlock(rows + i * row_bytes + b * geometry.block_bytes, geometry, first + i, b, cache);
    }
  }
}

void GetValueRows(const uint8_t* cache, int64_t first, int64_t count, const ValueShape& shape,
                  uint8_t* rows) {
  if (!shape.spanned()) return internal::GetPlainRows(cache, first, count, shape, rows);
  internal::GatherRows(
      first, count, shape,
      [&](int64_t p, int64_t h, uint8_t* slice) { GetValueSlice(cache, p, h, shape, slice); },
      rows);
}

void GetValueSlice(const uint8_t* cache, int64_t p, int64_t h, const ValueShape& shape,
                   uint8_t* slice) {
  if (!shape.spanned()) return internal::GetPlainSlice(cache, p, h, shape, slice);
  const SpanGeometry geometry(shape);
  const int64_t blocks_per_head = shape.blocks_per_head();
  for (int64_t b = 0; b < blocks_per_head; ++b) {
    GetBlock(cache, geometry, p, h * blocks_per_head + b, slice + b * geometry.block_bytes);
  }
}

}  // namespace ds::tensor
