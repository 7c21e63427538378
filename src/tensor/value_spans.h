// How an attention cache holds its V rows. A Q8_0 or Q4_0 V cache is stored, where the kernels'
// table sums V in integers (kernels::PrefersValueSpans), in spans of kValueSpanPositions (256)
// positions: per span, for each block of a row (the KV heads' blocks one after another) a plane
// of the span's codes of that block, then the span's scales (fp16 bits), block by block,
// kValueSpanPositions each. A plane holds its positions in tiles of kValueTilePositions (4): tile
// t holds code byte e of positions 4t..4t+3 in bytes 4e..4e+3, so that one vpdpbusd meets four
// positions' codes of 16 elements with four weights, and a pass over a block of the head reads
// one plane in order. A Q8_0 block's code byte e is element e (a tile takes 128 bytes); a Q4_0
// block's holds element e in its low nibble and element e + 16 in its high one (a tile takes 64
// bytes, one vector of both halves of the block). Read as rows instead, a decode step at depth
// 32k widened and interleaved every pair of V rows before its multiply-adds (two shuffles per four
// vpdpwssd), and read each row in four passes a quarter at a time (kernels_bench
// AttentionDecode/q8_0/32768).
// A span takes the bytes of its 256 rows; a cache takes whole spans. Other V caches (f32 rows,
// tables that sum V in floats) are rows.
// Rows leave and enter a cache as rows (snapshots, the cache tiers), whatever its layout.
#pragma once

#include <cstdint>

#include "tensor/cache_rows.h"

namespace ds::tensor {

inline constexpr int64_t kValueSpanPositions = 256;
inline constexpr int64_t kValueTilePositions = 4;

struct ValueShape : CacheRowShape {
  bool spans_wanted = false;

  bool spanned() const;  // spans wanted, and the dtype and head size allow them
  int64_t blocks_per_head() const;  // blocks of a head's slice; REQUIRES: spanned
  int64_t code_bytes() const;       // of one block's codes of one position; REQUIRES: spanned
  int64_t plane_bytes() const;      // one block's codes of a span's positions; REQUIRES: spanned
  int64_t span_bytes() const;       // REQUIRES: spanned
  // Of a cache with room for n_positions (spanned: whole spans).
  int64_t CacheBytes(int64_t n_positions) const;
};

// The plane of block b of head h in the span holding position p. REQUIRES: spanned.
const int8_t* ValuePlane(const uint8_t* cache, const ValueShape& shape, int64_t p, int64_t h,
                         int64_t b);
// The scales of block b of head h of the span holding position p, one per position of the span.
// REQUIRES: spanned.
const uint16_t* ValueSpanScales(const uint8_t* cache, const ValueShape& shape, int64_t p,
                                int64_t h, int64_t b);

// Writes `count` rows (row_bytes each, one after another) as positions [first, first + count).
void PutValueRows(const uint8_t* rows, int64_t first, int64_t count, const ValueShape& shape,
                  uint8_t* cache);
// Reads positions [first, first + count) as rows.
void GetValueRows(const uint8_t* cache, int64_t first, int64_t count, const ValueShape& shape,
                  uint8_t* rows);
// Head h's slice of position p (slice_bytes).
void GetValueSlice(const uint8_t* cache, int64_t p, int64_t h, const ValueShape& shape,
                   uint8_t* slice);

}  // namespace ds::tensor
