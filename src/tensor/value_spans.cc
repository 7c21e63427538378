#include "tensor/value_spans.h"

#include <cstring>

#include "tensor/blocks.h"

namespace ds::tensor {
namespace {

int64_t BlocksPerRow(const ValueShape& shape) { return shape.n_kv_heads * shape.blocks_per_head(); }

int64_t SpanOffset(const ValueShape& shape, int64_t p) {
  return p / kValueSpanPositions * shape.span_bytes();
}

// Block b of the row (the heads' blocks one after another) of position p: its code byte e lies
// at the plane's (p % span) / 4 * (4 * code bytes) + e * 4 + p % 4.
int64_t CodeOffset(const ValueShape& shape, int64_t p, int64_t row_block) {
  const int64_t in_span = p % kValueSpanPositions;
  return row_block * shape.plane_bytes() +
         in_span / kValueTilePositions * kValueTilePositions * shape.code_bytes() +
         in_span % kValueTilePositions;
}

int64_t ScaleIndex(const ValueShape& shape, int64_t p, int64_t row_block) {
  return BlocksPerRow(shape) * shape.plane_bytes() / static_cast<int64_t>(sizeof(uint16_t)) +
         row_block * kValueSpanPositions + p % kValueSpanPositions;
}

// A block as a row holds it (BlockQ8_0 and BlockQ4_0 alike): its fp16 scale, then its code bytes.
void PutBlock(const uint8_t* block, const ValueShape& shape, int64_t p, int64_t row_block,
              uint8_t* cache) {
  uint8_t* span = cache + SpanOffset(shape, p);
  uint8_t* codes = span + CodeOffset(shape, p, row_block);
  const uint8_t* block_codes = block + sizeof(uint16_t);
  for (int64_t e = 0; e < shape.code_bytes(); ++e) codes[e * kValueTilePositions] = block_codes[e];
  std::memcpy(span + ScaleIndex(shape, p, row_block) * sizeof(uint16_t), block,
              sizeof(uint16_t));
}

void GetBlock(const uint8_t* cache, const ValueShape& shape, int64_t p, int64_t row_block,
              uint8_t* block) {
  const uint8_t* span = cache + SpanOffset(shape, p);
  const uint8_t* codes = span + CodeOffset(shape, p, row_block);
  uint8_t* block_codes = block + sizeof(uint16_t);
  for (int64_t e = 0; e < shape.code_bytes(); ++e) block_codes[e] = codes[e * kValueTilePositions];
  std::memcpy(block, span + ScaleIndex(shape, p, row_block) * sizeof(uint16_t),
              sizeof(uint16_t));
}

}  // namespace

bool ValueShape::spanned() const {
  return spans_wanted && (dtype == DType::kQ8_0 || dtype == DType::kQ4_0) && head_dim % kQK == 0;
}

int64_t ValueShape::blocks_per_head() const { return head_dim / kQK; }

int64_t ValueShape::code_bytes() const {
  return RowBytes(dtype, kQK) - static_cast<int64_t>(sizeof(uint16_t));
}

int64_t ValueShape::plane_bytes() const { return kValueSpanPositions * code_bytes(); }

int64_t ValueShape::span_bytes() const { return kValueSpanPositions * row_bytes(); }

int64_t ValueShape::CacheBytes(int64_t n_positions) const {
  if (!spanned()) return n_positions * row_bytes();
  const int64_t spans = (n_positions + kValueSpanPositions - 1) / kValueSpanPositions;
  return spans * span_bytes();
}

const int8_t* ValuePlane(const uint8_t* cache, const ValueShape& shape, int64_t p, int64_t h,
                         int64_t b) {
  const uint8_t* span = cache + SpanOffset(shape, p);
  return reinterpret_cast<const int8_t*>(
      span + (h * shape.blocks_per_head() + b) * shape.plane_bytes());
}

const uint16_t* ValueSpanScales(const uint8_t* cache, const ValueShape& shape, int64_t p,
                                int64_t h, int64_t b) {
  const uint8_t* span = cache + SpanOffset(shape, p);
  return reinterpret_cast<const uint16_t*>(span) +
         ScaleIndex(shape, 0, h * shape.blocks_per_head() + b);
}

void PutValueRows(const uint8_t* rows, int64_t first, int64_t count, const ValueShape& shape,
                  uint8_t* cache) {
  if (!shape.spanned()) return internal::PutPlainRows(rows, first, count, shape, cache);
  const int64_t row_bytes = shape.row_bytes();
  const int64_t block_bytes = RowBytes(shape.dtype, kQK);
  const int64_t n_blocks = BlocksPerRow(shape);
  for (int64_t i = 0; i < count; ++i) {
    for (int64_t b = 0; b < n_blocks; ++b) {
      PutBlock(rows + i * row_bytes + b * block_bytes, shape, first + i, b, cache);
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
  const int64_t block_bytes = RowBytes(shape.dtype, kQK);
  for (int64_t b = 0; b < shape.blocks_per_head(); ++b) {
    GetBlock(cache, shape, p, h * shape.blocks_per_head() + b, slice + b * block_bytes);
  }
}

}  // namespace ds::tensor
