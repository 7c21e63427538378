// How an attention cache holds its K rows. A K cache of Q8_0 rows whose heads are whole pairs of
// blocks (head_dim % 64 == 0, so a head's slice of a row is whole dwords) is stored, where its
// shape asks for tiles (the kernels' table scores them in int8: kernels::PrefersTiledKeys), in
// tiles of kKeyTilePositions (16) positions: per tile and KV head, the 16 positions' slices
// transposed by dword, dword c of position p at (c * 16 + p % 16) * 4 bytes from the head's start
// in the tile, the heads one after another; a tile takes the bytes of its 16 rows, each stored
// with its top bit flipped (a code c as the unsigned byte c + 128, which vpdpbusd takes as it is;
// flipping the bits of every vector on the step took a ninth of the scores' vector steps). Scores
// in int8 read dword c of 16 positions with one load: transposing every block of rows on each
// decode step instead took about a quarter of a step at depth 32k (kernels_bench
// AttentionDecode/q8_0/32768).
// Other K caches (f32 rows, other head sizes, tables that read rows faster) are rows.
// Rows leave and enter a cache as rows (snapshots, the cache tiers), whatever its layout.
#pragma once

#include <cstdint>

#include "tensor/cache_rows.h"

namespace ds::tensor {

inline constexpr int64_t kKeyTilePositions = 16;

struct KeyShape : CacheRowShape {
  bool tiles_wanted = false;

  bool tiled() const;  // tiles wanted, and the dtype and head size allow them
  // Of a cache with room for n_positions (tiled: whole tiles).
  int64_t CacheBytes(int64_t n_positions) const;
};

// Head h's part of the tile holding position p: its positions' dwords by dword. REQUIRES: tiled.
const uint8_t* KeyTileHead(const uint8_t* cache, const KeyShape& shape, int64_t p, int64_t h);

// Writes `count` rows (row_bytes each, one after another) as positions [first, first + count).
void PutKeyRows(const uint8_t* rows, int64_t first, int64_t count, const KeyShape& shape,
                uint8_t* cache);
// Reads positions [first, first + count) as rows.
void GetKeyRows(const uint8_t* cache, int64_t first, int64_t count, const KeyShape& shape,
                uint8_t* rows);
// Head h's slice of position p (slice_bytes).
void GetKeySlice(const uint8_t* cache, int64_t p, int64_t h, const KeyShape& shape,
                 uint8_t* slice);

}  // namespace ds::tensor
