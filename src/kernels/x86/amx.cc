// The AMX wide path (KernelTable::wide_q8): prompts against Q8_0 weights as int8 tile products of
// up to 16 tokens x 16 weight rows x one 32-element block, each an exact int32 sum of code
// products. Every block then takes the float steps of the one-token kernel
// (LegacyKernel::DecodeRow): block b's sum times (weight scale x activation scale) is added into
// slot b % 8 of its (token, row), blocks in order, and the eight slots are summed as ReduceSum8
// sums lanes. So a token's result keeps the bits it has alone, whatever tile it is in.
//
// Compiled alone with AMX's -m flags (see CMakeLists.txt), like table_unit.inc's files, and with
// the same rule: nothing here may call an inline function of a shared header.

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/kernel_table.h"
#include "tensor/blocks.h"

namespace ds::kernels::internal::amx {
namespace {

constexpr int kGroupRows = static_cast<int>(kDecodedRowGroup);  // weight rows per tile product
constexpr int kTileTokens = kMaxWideTileTokens;                  // tokens per tile product
constexpr int kCodeGroups = tensor::kQK / 4;  // rows of the weight operand: 4 codes per row
constexpr int kSlots = 8;
static_assert(kGroupRows == 16 && kTileTokens == 16, "one 16 x 16 int32 tile per product");

// One block of a group of weight rows: codes[k][r] = codes [4k, 4k + 4) of row r, the layout of
// tdpbssd's second operand; d[r] the row's scale. Rows past the matrix's last are zeros.
struct WideWeightBlock {
  int8_t codes[kCodeGroups][kGroupRows][4];
  float d[kGroupRows];
};

// Decoded bytes per row: a group's blocks divided among its rows.
int64_t DecodedRowBytes(int64_t n_cols) {
  static_assert(sizeof(WideWeightBlock) % kGroupRows == 0);
  return n_cols / tensor::kQK * static_cast<int64_t>(sizeof(WideWeightBlock) / kGroupRows);
}

// WideQ8Path::decode of Q8_0 rows into groups of kGroupRows rows, block-major in each group.
void DecodeQ8_0Groups(const uint8_t* w, int64_t w_stride, int64_t num_rows, int64_t n_cols,
                      uint8_t* out) {
  const int64_t n_blocks = n_cols / tensor::kQK;
  const int64_t n_groups = (num_rows + kGroupRows - 1) / kGroupRows;
  auto* blocks = reinterpret_cast<WideWeightBlock*>(out);
  std::memset(out, 0, static_cast<size_t>(n_groups * n_blocks) * sizeof(WideWeightBlock));
  for (int64_t r = 0; r < num_rows; ++r) {
    WideWeightBlock* group = blocks + r / kGroupRows * n_blocks;
    const int in_group = static_cast<int>(r % kGroupRows);
    const auto* row = reinterpret_cast<const tensor::BlockQ8_0*>(w + r * w_stride);
    for (int64_t b = 0; b < n_blocks; ++b) {
      for (int k = 0; k < kCodeGroups; ++k) {
        std::memcpy(group[b].codes[k][in_group], row[b].qs + 4 * k, 4);
      }
      group[b].d[in_group] = _cvtsh_ss(row[b].d);
    }
  }
}

// ldtilecfg's 64-byte operand (palette 1). The tile registers: 0 and 1 the sums of two blocks in
// flight, 2 and 3 their activations, 4 and 5 their weights. The tile intrinsics take a register's
// number as a literal, which StartBlock spells out.
struct TileConfig {
  uint8_t palette;
  uint8_t start_row;
  uint8_t reserved[14];
  uint16_t bytes_per_row[16];
  uint8_t rows[16];
};
constexpr uint16_t kSumsRowBytes = kGroupRows * sizeof(int32_t);
constexpr uint16_t kWeightRowBytes = kGroupRows * 4;

// Tiles of num_tokens rows of sums and activations.
void ConfigureTiles(int num_tokens) {
  alignas(64) TileConfig config = {};
  config.palette = 1;
  for (int sums : {0, 1}) {
    config.rows[sums] = static_cast<uint8_t>(num_tokens);
    config.bytes_per_row[sums] = kSumsRowBytes;
  }
  for (int acts : {2, 3}) {
    config.rows[acts] = static_cast<uint8_t>(num_tokens);
    config.bytes_per_row[acts] = tensor::kQK;
  }
  for (int weights : {4, 5}) {
    config.rows[weights] = kCodeGroups;
    config.bytes_per_row[weights] = kWeightRowBytes;
  }
  // ldtilecfg reads memory the compiler does not know it reads: keep the stores above.
  asm volatile("" : : "r"(&config) : "memory");
  _tile_loadconfig(&config);
}

// The int32 sums of one block's product, [token][row].
using BlockSums = int32_t[kTileTokens][kGroupRows];
// A slot's float accumulators, [token][row].
using SlotSums = float[kTileTokens][kGroupRows];

// Where a tile's activations live: ActBlockQ8 rows, the first at `rows`.
struct ActRows {
  const uint8_t* rows;
  int64_t stride;
  const int8_t* Codes(int64_t b) const {
    return reinterpret_cast<const ActBlockQ8*>(rows)[b].qs;
  }
  float Scale(int t, int64_t b) const {
    return reinterpret_cast<const ActBlockQ8*>(rows + t * stride)[b].d;
  }
};

// Block b's product on one of two sets of tile registers (b's parity), so that one block's
// product runs while the other's sums are stored: Start loads the operands and multiplies, Finish
// stores the sums.
inline void StartBlock(const WideWeightBlock* weights, const ActRows& acts, int64_t b) {
  if (b % 2 == 0) {
    _tile_loadd(2, acts.Codes(b), acts.stride);
    _tile_loadd(4, weights[b].codes, kWeightRowBytes);
    _tile_zero(0);
    _tile_dpbssd(0, 2, 4);
  } else {
    _tile_loadd(3, acts.Codes(b), acts.stride);
    _tile_loadd(5, weights[b].codes, kWeightRowBytes);
    _tile_zero(1);
    _tile_dpbssd(1, 3, 5);
  }
}

inline void FinishBlock(int64_t b, BlockSums& sums) {
  if (b % 2 == 0) {
    _tile_stored(0, sums, kSumsRowBytes);
  } else {
    _tile_stored(1, sums, kSumsRowBytes);
  }
}

// slot[t] (lane r) += float(sums[t][r]) * (weight scale r x activation scale t), DecodeRow's
// step; `first` when the slot holds nothing yet.
inline void AddBlock(const BlockSums& sums, const WideWeightBlock& weights, const ActRows& acts,
                     int64_t b, int num_tokens, bool first, SlotSums& slot) {
  const __m512 weight_d = _mm512_loadu_ps(weights.d);
  for (int t = 0; t < num_tokens; ++t) {
    const __m512 scale = _mm512_mul_ps(weight_d, _mm512_set1_ps(acts.Scale(t, b)));
    const __m512 acc = first ? _mm512_setzero_ps() : _mm512_load_ps(slot[t]);
    _mm512_store_ps(slot[t],
                    _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_load_si512(sums[t])), scale, acc));
  }
}

// The eight slots of one group of rows against a tile of tokens, blocks in order. While block b
// takes its float steps, block b + 1's sums are stored and block b + 2's product starts, which
// keeps the tile unit busy alongside the vector units.
void AccumulateGroup(const WideWeightBlock* weights, const ActRows& acts, int64_t n_blocks,
                     int num_tokens, SlotSums* slots) {
  alignas(64) BlockSums ring[2];
  StartBlock(weights, acts, 0);
  FinishBlock(0, ring[0]);
  if (n_blocks > 1) StartBlock(weights, acts, 1);
  for (int64_t b = 0; b < n_blocks; ++b) {
    if (b + 1 < n_blocks) FinishBlock(b + 1, ring[(b + 1) % 2]);
    if (b + 2 < n_blocks) StartBlock(weights, acts, b + 2);
    AddBlock(ring[b % 2], weights[b], acts, b, num_tokens, b < kSlots, slots[b % kSlots]);
  }
}

// WideQ8Path::tile for the rows DecodeQ8_0Groups wrote.
void WideTileQ8(const uint8_t* decoded, int64_t decoded_row_bytes, int64_t num_rows,
                int64_t n_cols, const uint8_t* act, int64_t act_stride, int num_tokens, float* y,
                int64_t y_stride) {
  const int64_t n_blocks = n_cols / tensor::kQK;
  const ActRows acts{act, act_stride};
  ConfigureTiles(num_tokens);
  alignas(64) SlotSums slots[kSlots];
  for (int64_t r0 = 0; r0 < num_rows; r0 += kGroupRows) {
    const auto* weights = reinterpret_cast<const WideWeightBlock*>(decoded + r0 * decoded_row_bytes);
    AccumulateGroup(weights, acts, n_blocks, num_tokens, slots);
    const int64_t rows = num_rows - r0 < kGroupRows ? num_rows - r0 : kGroupRows;
    const __mmask16 valid_rows = static_cast<__mmask16>((1u << rows) - 1);
    for (int t = 0; t < num_tokens; ++t) {
      // Slots no block reached are zeros, as DecodeRow's unused lanes.
      __m512 s[kSlots];
      for (int k = 0; k < kSlots; ++k) {
        s[k] = k < n_blocks ? _mm512_load_ps(slots[k][t]) : _mm512_setzero_ps();
      }
      const __m512 total =
          _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(s[0], s[4]), _mm512_add_ps(s[2], s[6])),
                        _mm512_add_ps(_mm512_add_ps(s[1], s[5]), _mm512_add_ps(s[3], s[7])));
      _mm512_mask_storeu_ps(y + t * y_stride + r0, valid_rows, total);
    }
  }
  // Leaves the tiles unused again, so that a thread switch need not save them (keeping them
  // configured from call to call measured slower).
  _tile_release();
}

}  // namespace

WideQ8Path WidePathFor(tensor::DType type) {
  if (type != tensor::DType::kQ8_0) return {};
  return {DecodeQ8_0Groups, DecodedRowBytes, WideTileQ8};
}

}  // namespace ds::kernels::internal::amx
