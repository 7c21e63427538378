// The block scales of a Q8_0 V cache gathered by block, beside its rows. Positions go in groups
// of kValueScalePositions: group g holds the scale of block b (of a row's row_floats / 32 blocks,
// the KV heads' one after another) of its position p, as the row holds it (fp16 bits), at
// (g * n_blocks + b) * kValueScalePositions + p % kValueScalePositions, so that the scales of a
// step's block of positions lie together. Attention tables that take V's weighted sums in integers
// load 16 positions' scales of a block at once from there instead of gathering them from 16 rows
// (vpgatherdd). kernels_bench on the bench model's shape, a Zen 4 machine, alternating binaries:
// one thread, a decode step at depth 4096 200-208 -> 179-186 us, a 64-token prompt tile there
// 9.3-9.5 -> 8.5-8.7 ms, a step with the layer in L2 38.7-39.0 -> 34.9-35.0 us; two threads at
// depth 32k 679-695 -> 658-667 us. Each block's plane spanning the whole context instead (a step's
// scales in as many places as blocks), that step took 670-741 us.
#pragma once

#include <cstdint>

namespace ds::tensor {

inline constexpr int64_t kValueScalePositions = 256;

// Scales (uint16_t) that room for n_positions rows of row_floats values takes.
int64_t ValueScalesSize(int64_t n_positions, int64_t row_floats);
// Where the scale of block b of position p lies, rows of n_blocks blocks.
int64_t ValueScaleIndex(int64_t p, int64_t b, int64_t n_blocks);

// Writes the scales of `count` Q8_0 rows of row_floats values (one after another from `rows`) as
// those of positions [first, first + count).
void PutValueScales(const uint8_t* rows, int64_t first, int64_t count, int64_t row_floats,
                    uint16_t* scales);

}  // namespace ds::tensor
