// The AMX wide path (KernelTable::wide_q8): prompts against Q8_0 weights as int8 tile products of
// up to 16 tokens x 16 weight rows x one 32-element block, each an exact int32 sum of code
// products. Every block then takes the float steps of the one-token kernel
// (LegacyKernel::AccumulateRow): block b's sum times (weight scale x activation scale) is added
// into slot b % 8 of its (token, row), blocks in order, and the eight slots are summed as
// ReduceSum8 sums lanes. So a token's result keeps the bits it has alone, whatever tile it is in.
//
// Compiled alone with AMX's -m flags (see CMakeLists.txt), like table_unit.inc's files, and with
// the same rule: nothing here may call an inline function of a shared header.

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/kernel_table.h"
#include "tensor/blocks.h"

namespace ds::kernels::internal::amx {
namespace {

constexpr int kGroupRows = 16;                   // weight rows per tile product
constexpr int kTileTokens = kMaxWideTileTokens;  // tokens per tile product
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

// Permutation indices of TransposeCodes' three steps (see there), built once.
struct TransposeIndices {
  __m512i quads[2], octets[2][2], rows[2];
  TransposeIndices() {
    alignas(64) int32_t lanes[16];
    // Step 1: lane (k - 4h) * 4 + q holds dword k of row q of four, q / 2 picking the source.
    for (int h = 0; h < 2; ++h) {
      for (int lane = 0; lane < 16; ++lane) {
        const int k = 4 * h + lane / 4, q = lane % 4;
        lanes[lane] = (q / 2) * 16 + (q % 2) * 8 + k;
      }
      quads[h] = _mm512_load_si512(lanes);
    }
    // Step 2: lane (k - 4h - 2s) * 8 + o holds dword k of row o of eight.
    for (int h = 0; h < 2; ++h) {
      for (int s = 0; s < 2; ++s) {
        for (int lane = 0; lane < 16; ++lane) {
          const int k = 4 * h + 2 * s + lane / 8, o = lane % 8;
          lanes[lane] = (o / 4) * 16 + (k - 4 * h) * 4 + o % 4;
        }
        octets[h][s] = _mm512_load_si512(lanes);
      }
    }
    // Step 3: lane r holds dword k of row r of sixteen (k - 4h - 2s = e).
    for (int e = 0; e < 2; ++e) {
      for (int r = 0; r < 16; ++r) lanes[r] = (r / 8) * 16 + e * 8 + r % 8;
      rows[e] = _mm512_load_si512(lanes);
    }
  }
};

// out[k] = dword k of the 32 codes of each of 16 rows (pairs[i] = rows 2i and 2i + 1, 8 dwords
// each): a 16 x 8 transpose of dwords in three steps of two-source permutes, 24 in all.
inline void TransposeCodes(const __m512i (&pairs)[8], const TransposeIndices& ix,
                           __m512i (&out)[kCodeGroups]) {
  __m512i quads[4][2];  // [rows 4j .. 4j + 3][k in 4h .. 4h + 3]
  for (int j = 0; j < 4; ++j) {
    for (int h = 0; h < 2; ++h) {
      quads[j][h] = _mm512_permutex2var_epi32(pairs[2 * j], ix.quads[h], pairs[2 * j + 1]);
    }
  }
  __m512i octets[2][2][2];  // [rows 8m .. 8m + 7][h][k in 4h + 2s .. 4h + 2s + 1]
  for (int m = 0; m < 2; ++m) {
    for (int h = 0; h < 2; ++h) {
      for (int s = 0; s < 2; ++s) {
        octets[m][h][s] =
            _mm512_permutex2var_epi32(quads[2 * m][h], ix.octets[h][s], quads[2 * m + 1][h]);
      }
    }
  }
  for (int h = 0; h < 2; ++h) {
    for (int s = 0; s < 2; ++s) {
      for (int e = 0; e < 2; ++e) {
        out[4 * h + 2 * s + e] =
            _mm512_permutex2var_epi32(octets[0][h][s], ix.rows[e], octets[1][h][s]);
      }
    }
  }
}

// WideQ8Path::decode of Q8_0 rows into groups of kGroupRows rows, block-major in each group: a
// group's block is its rows' codes transposed by dwords (TransposeCodes) and one gather of their
// scales.
void DecodeQ8_0Groups(const uint8_t* w, int64_t w_stride, int64_t num_rows, int64_t n_cols,
                      uint8_t* out) {
  static const TransposeIndices indices;
  const int64_t n_blocks = n_cols / tensor::kQK;
  auto* blocks = reinterpret_cast<WideWeightBlock*>(out);
  const __m512i row_offsets =
      _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                         _mm512_set1_epi32(static_cast<int32_t>(w_stride)));
  constexpr int kCodesOffset = offsetof(tensor::BlockQ8_0, qs);
  constexpr int64_t kBlockBytes = sizeof(tensor::BlockQ8_0);
  static_assert(offsetof(tensor::BlockQ8_0, d) == 0);
  for (int64_t r0 = 0; r0 < num_rows; r0 += kGroupRows) {
    const int64_t rows = num_rows - r0 < kGroupRows ? num_rows - r0 : kGroupRows;
    const __mmask16 present = static_cast<__mmask16>((1u << rows) - 1);
    WideWeightBlock* group = blocks + r0 / kGroupRows * n_blocks;
    for (int64_t b = 0; b < n_blocks; ++b) {
      const uint8_t* block = w + r0 * w_stride + b * kBlockBytes;
      // Rows past the matrix's last read as zeros.
      const auto codes_of = [&](int r) {
        return r < rows ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(
                              block + r * w_stride + kCodesOffset))
                        : _mm256_setzero_si256();
      };
      __m512i pairs[8];
      for (int i = 0; i < 8; ++i) {
        pairs[i] = _mm512_inserti64x4(_mm512_castsi256_si512(codes_of(2 * i)), codes_of(2 * i + 1),
                                      1);
      }
      __m512i codes[kCodeGroups];
      TransposeCodes(pairs, indices, codes);
      for (int k = 0; k < kCodeGroups; ++k) _mm512_storeu_si512(group[b].codes[k], codes[k]);
      // The dword at a block's start holds its half-precision scale in the low 16 bits.
      const __m512i scale_words = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), present,
                                                              row_offsets, block, 1);
      _mm512_storeu_ps(group[b].d, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(scale_words)));
    }
  }
}

// ldtilecfg's 64-byte operand (palette 1). The tile registers: 0 and 1 the sums of two blocks in
// flight, 2 and 3 their activations, 4 and 5 their weights, all of kTileTokens rows but the
// weights. The tile intrinsics take a register's number as a literal, which StartBlock spells
// out.
struct TileConfig {
  uint8_t palette;
  uint8_t start_row;
  uint8_t reserved[14];
  uint16_t bytes_per_row[16];
  uint8_t rows[16];
};
constexpr uint16_t kSumsRowBytes = kGroupRows * sizeof(int32_t);
constexpr uint16_t kWeightRowBytes = kGroupRows * 4;

alignas(64) constexpr TileConfig kTileConfig = {
    1,
    0,
    {},
    {kSumsRowBytes, kSumsRowBytes, tensor::kQK, tensor::kQK, kWeightRowBytes, kWeightRowBytes},
    {kTileTokens, kTileTokens, kTileTokens, kTileTokens, kCodeGroups, kCodeGroups},
};

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

// Block b's product on one of two sets of tile registers (by the parity of its place in the
// sequence, i), so that one block's product runs while the other's sums are stored: Start loads
// the operands and multiplies, Finish stores the sums.
inline void StartBlock(const WideWeightBlock* weights, const ActRows& acts, int64_t b, int64_t i) {
  if (i % 2 == 0) {
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

inline void FinishBlock(int64_t i, BlockSums& sums) {
  if (i % 2 == 0) {
    _tile_stored(0, sums, kSumsRowBytes);
  } else {
    _tile_stored(1, sums, kSumsRowBytes);
  }
}

// acc[t] (lane r) += float(sums[t][r]) * (weight scale r x activation scale t), as
// AccumulateRow adds a block.
inline void AddBlock(const BlockSums& sums, const WideWeightBlock& weights, const ActRows& acts,
                     int64_t b, __m512 (&acc)[kTileTokens]) {
  const __m512 weight_d = _mm512_loadu_ps(weights.d);
#pragma GCC unroll 16
  for (int t = 0; t < kTileTokens; ++t) {
    const __m512 scale = _mm512_mul_ps(weight_d, _mm512_set1_ps(acts.Scale(t, b)));
    acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_load_si512(sums[t])), scale, acc[t]);
  }
}

// The eight slots of one group of rows against a tile of tokens. A slot's blocks (k, k + 8, ...)
// go one after another, its accumulators in registers; while one block takes its float steps, the
// next one's sums are stored and the one after starts its product, which keeps the tile unit busy
// alongside the vector units.
void AccumulateGroup(const WideWeightBlock* weights, const ActRows& acts, int64_t n_blocks,
                     SlotSums* slots) {
  // The block after b in slot order, or n_blocks after the last.
  const auto next = [n_blocks](int64_t b) {
    if (b + kSlots < n_blocks) return b + kSlots;
    const int64_t next_slot = b % kSlots + 1;
    return next_slot < kSlots && next_slot < n_blocks ? next_slot : n_blocks;
  };
  alignas(64) BlockSums ring[2];
  int64_t second = next(0), third = second < n_blocks ? next(second) : n_blocks;
  StartBlock(weights, acts, 0, 0);
  FinishBlock(0, ring[0]);
  if (second < n_blocks) StartBlock(weights, acts, second, 1);
  __m512 acc[kTileTokens];
  for (int64_t i = 0, b = 0; b < n_blocks; ++i) {
    if (second < n_blocks) FinishBlock(i + 1, ring[(i + 1) % 2]);
    if (third < n_blocks) StartBlock(weights, acts, third, i + 2);
    if (b < kSlots) {
      for (__m512& a : acc) a = _mm512_setzero_ps();
    }
    AddBlock(ring[i % 2], weights[b], acts, b, acc);
    if (b + kSlots >= n_blocks) {
      for (int t = 0; t < kTileTokens; ++t) _mm512_store_ps(slots[b % kSlots][t], acc[t]);
    }
    b = second;
    second = third;
    third = third < n_blocks ? next(third) : n_blocks;
  }
}

// WideQ8Path::tile for the rows DecodeQ8_0Groups wrote, one tile of tokens after another. The
// tiles are configured once for them all: a call takes a whole block of rows.
void WideTileQ8(const uint8_t* decoded, int64_t decoded_row_bytes, int64_t num_rows,
                int64_t n_cols, const uint8_t* act, int64_t act_stride, int64_t num_tokens,
                float* y, int64_t y_stride) {
  const int64_t n_blocks = n_cols / tensor::kQK;
  _tile_loadconfig(&kTileConfig);
  alignas(64) SlotSums slots[kSlots];
  for (int64_t t0 = 0; t0 < num_tokens; t0 += kTileTokens) {
    const ActRows acts{act + t0 * act_stride, act_stride};
    const int64_t tokens = num_tokens - t0 < kTileTokens ? num_tokens - t0 : kTileTokens;
    for (int64_t r0 = 0; r0 < num_rows; r0 += kGroupRows) {
      AccumulateGroup(reinterpret_cast<const WideWeightBlock*>(decoded + r0 * decoded_row_bytes),
                      acts, n_blocks, slots);
      const int64_t rows = num_rows - r0 < kGroupRows ? num_rows - r0 : kGroupRows;
      const __mmask16 valid_rows = static_cast<__mmask16>((1u << rows) - 1);
      for (int64_t t = 0; t < tokens; ++t) {
        // Slots no block reached are zeros, as AccumulateRow's unused lanes.
        __m512 s[kSlots];
        for (int k = 0; k < kSlots; ++k) {
          s[k] = k < n_blocks ? _mm512_load_ps(slots[k][t]) : _mm512_setzero_ps();
        }
        const __m512 total =
            _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(s[0], s[4]), _mm512_add_ps(s[2], s[6])),
                          _mm512_add_ps(_mm512_add_ps(s[1], s[5]), _mm512_add_ps(s[3], s[7])));
        _mm512_mask_storeu_ps(y + (t0 + t) * y_stride + r0, valid_rows, total);
      }
    }
  }
  // Leaves the tiles unused again, so that a thread switch need not save them.
  _tile_release();
}

}  // namespace

WideQ8Path WidePathFor(tensor::DType type) {
  if (type != tensor::DType::kQ8_0) return {};
  return {DecodeQ8_0Groups, DecodedRowBytes, kGroupRows, WideTileQ8};
}

}  // namespace ds::kernels::internal::amx
