// Internal to the kernels library: the entry points one instruction set provides, and the
// activation formats the matrix kernels read. kernels.cc picks one table at run time (dispatch.h);
// ref/ is the scalar oracle every table is tested against.
//
// Matrix kernels compute a tile of weight rows against 1..kMaxTileTokens activation rows. The
// arithmetic of each (row, token) dot product is the same for every tile shape, so a result never
// depends on how tokens were tiled or rows split across threads.
//
// This header must stay free of inline functions: it is included by translation units compiled
// with -mavx512f, +dotprod etc., and an inline function emitted there could be the copy the
// linker keeps for code that runs on CPUs without those instructions.
// Thread safety: plain data and function pointers.
#pragma once

#include <cstdint>

#include "kernels/kernels.h"
#include "tensor/blocks.h"
#include "tensor/value_spans.h"

namespace ds::kernels::internal {

inline constexpr int kMaxTileTokens = 8;
// Tokens per tile product of a table's wide path (WideQ8Path).
inline constexpr int kMaxWideTileTokens = 16;

// How activations are handed to a weight dtype's row kernel.
enum class ActFormat {
  kF32,        // the caller's float rows (F32, F16, BF16 weights)
  kBf16,       // rounded to bf16, to nearest even (BF16 weights in a table that multiplies bf16)
  kQ8Blocks,   // ActBlockQ8 per 32 elements (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 weights)
  kQ8KBlocks,  // tensor::BlockQ8_K per 256 elements (the K-quants)
};

// An activation block for the 32-element weight types: x[j] = d * qs[j], qs in [-127, 127].
// d_sum = d * sum(qs) serves the weight types with an additive min (Q4_1, Q5_1).
struct ActBlockQ8 {
  float d;
  float d_sum;
  int8_t qs[tensor::kQK];
};

// One 32-element block of kMaxTileTokens activation rows, the tile layout of the AVX2 table (each
// table defines its own; KernelTable::q8_tile_bytes sizes it), interleaved so that a vector of 32
// bytes holds 4 consecutive codes of every token: abs_qs[g][t] = |qs[4g, 4g + 4)| of token t,
// qs[g][t] the signed codes, d[t] and d_sum[t] as in ActBlockQ8. Tokens past a tile's last are
// zeros. A kernel then multiplies each 4 weight codes, broadcast, into all tokens at once. abs_qs
// is stored although qs gives it: taking it in the kernel made the Q8_0 tile kernel 10-20% slower.
struct ActTileQ8Block {
  int8_t abs_qs[tensor::kQK / 4][kMaxTileTokens][4];
  int8_t qs[tensor::kQK / 4][kMaxTileTokens][4];
  float d[kMaxTileTokens];
  float d_sum[kMaxTileTokens];
};

// The K-quant counterpart: one 256-element super-block of kMaxTileTokens tensor::BlockQ8_K rows,
// qs interleaved as in ActTileQ8Block and bsum_pairs[k][t] = bsums[2k, 2k + 2) of token t.
struct ActTileQ8KBlock {
  int8_t qs[tensor::kQK_K / 4][kMaxTileTokens][4];
  int16_t bsum_pairs[tensor::kQK_K / 32][kMaxTileTokens][2];
  float d[kMaxTileTokens];
};

// out[r * num_tokens + t] = dot(weight row r, activation row t) for r < num_rows and
// t < num_tokens, where weight row r of n_cols elements starts at w + r * w_stride_bytes and
// activation row t at act + t * act_stride_bytes. Exceptions: in a table with build_q8_tiles, the
// 32-element block types read a tile of 2 or more tokens as that table's tile of n_cols / 32
// blocks at act, and with build_q8k_tiles the K-quants as n_cols / 256 ActTileQ8KBlocks
// (act_stride_bytes unused). REQUIRES: 1 <= num_tokens <= kMaxTileTokens; n_cols is a multiple
// of the weight dtype's block size.
using TileDotFn = void (*)(const uint8_t* w, int64_t w_stride_bytes, int64_t num_rows,
                           int64_t n_cols, const uint8_t* act, int64_t act_stride_bytes,
                           int num_tokens, float* out);

// Attention over a long cache is computed chunk by chunk: each query's positions are cut at
// multiples of kAttentionChunkPositions, an online softmax runs over each chunk from scratch, and
// the chunks' partial states are folded in order (AttendMergeFn). The cut points are fixed, so
// the result is the same whether one task takes every chunk of a query (a prompt's tiles) or the
// chunks run as tasks of their own (a decode step, whose tasks then spread over the threads).
// A query's partial state: its unnormalised output (head_dim floats), then its running maximum
// and denominator; maximum -inf, denominator 0 and output 0 when it saw no position of the chunk.
inline constexpr int64_t kPartialStateExtraFloats = 2;

// Attends the queries of tokens [t0, t1) for query heads [h0, h1), which all read one KV head,
// over the positions of chunk `chunk` that each sees, and writes their partial states to
// `partial` ([n_queries][head_dim + kPartialStateExtraFloats], query i being token
// t0 + i / (h1 - h0) and head h0 + i % (h1 - h0)). `scratch` holds at least
// AttendScratchFloats(head_dim, n_queries) floats owned by the calling task. Every query does the
// same arithmetic, in the same order, whatever tile it is attended in, so tiling never changes a
// result.
using AttendFn = void (*)(const AttentionArgs& args, int64_t t0, int64_t t1, int64_t h0,
                          int64_t h1, int64_t chunk, float* partial, float* scratch);
// Folds the partial states of chunks [0, n_chunks) of those queries (chunk c's at
// partials + c * chunk_stride, laid out as AttendFn writes them), in chunk order, and writes
// their outputs to args.out.
using AttendMergeFn = void (*)(const AttentionArgs& args, int64_t t0, int64_t t1, int64_t h0,
                               int64_t h1, int64_t n_chunks, int64_t chunk_stride,
                               const float* partials);

// Cached positions per chunk of the online softmax: a decode step's chunk of the bench model's
// K and V rows (both KV heads) takes 557 KB, which the L2 keeps for the second head's pass.
inline constexpr int64_t kAttentionChunkPositions = 1024;

// Positions scored per step of the online softmax, whose fixed costs per step (the running
// maximum, the rescale, a group's set-up) a larger block spreads wider, and whose block of K and
// V rows (dequantised, for Q8_0 KV) a smaller one keeps in L1 for every query of the tile. With
// int8 scores and V read in place, 64 positions beat 16 on the bench model's shape on a Zen 5
// machine (kernels_bench, two threads): a decode step at depth 4096 took 137 us instead of 174,
// at 32k 946 us instead of 1016, and a 64-token prompt tile at depth 4096 4.3 ms instead of 4.9.
// (Before both, with every block dequantised, 16 had been the faster: 7.5 ms to 9.6 at 32k.)
inline constexpr int64_t kAttentionPositionBlock = 64;
static_assert(kAttentionChunkPositions % kAttentionPositionBlock == 0);
// The most positions a table's step may score instead (the int8-score tables', kv_scores.inc).
inline constexpr int64_t kMaxAttentionPositionBlock = 256;
static_assert(kAttentionChunkPositions % kMaxAttentionPositionBlock == 0);
// Queries (tokens x heads of a GQA group) attended together, so each block of K and V rows is
// read once for all of them: a tile's accumulators (32 x head_dim floats) stay in L1/L2 with the
// block.
inline constexpr int64_t kAttentionQueryTile = 32;

// One block of K and of V rows dequantised to f32 (the SIMD tables', for quantised KV), which is
// more than the portable table's block of scores, one dequantised row and one tiled K slice, and
// the call's n_queries queries quantised for int8 scores (at most 3 bytes per element each; or
// one tiled K slice, about 1.1 bytes per element).
inline constexpr int64_t AttendScratchFloats(int64_t head_dim, int64_t n_queries) {
  return 2 * kMaxAttentionPositionBlock * head_dim + n_queries * head_dim * 3 / 4;
}

// Rows of one weight dtype decoded once, then read by many tiles of tokens: decode writes
// num_rows rows of n_cols, each row_bytes(n_cols) bytes, at out (num_rows rounded up to a multiple
// of row_group, for layouts that interleave rows); tile reads them as its weight rows
// (w_stride_bytes = one decoded row) against tiles of 2 or more tokens, with the bits of the
// dtype's own TileDotFn.
struct RowDecoder {
  void (*decode)(const uint8_t* w, int64_t w_stride_bytes, int64_t num_rows, int64_t n_cols,
                 uint8_t* out) = nullptr;
  TileDotFn tile = nullptr;
  int64_t (*row_bytes)(int64_t n_cols) = nullptr;
  int64_t row_group = 1;
};

// A table's path for prompts through matrix-tile instructions (AMX), for the 32-element block
// weights it serves. Weights are decoded once per row block (decode, row_bytes and row_group as
// in RowDecoder); tile then computes, for t < num_tokens and r < num_rows, y[t * y_stride + r] =
// dot(decoded row r, ActBlockQ8 row t at act + t * act_stride), each with the bits of the
// dtype's one-token kernel. Rows up to num_tokens rounded up to a multiple of kMaxWideTileTokens
// must be readable (zeros past the last token).
struct WideQ8Path {
  void (*decode)(const uint8_t* w, int64_t w_stride_bytes, int64_t num_rows, int64_t n_cols,
                 uint8_t* out) = nullptr;
  int64_t (*row_bytes)(int64_t n_cols) = nullptr;
  int64_t row_group = 1;
  void (*tile)(const uint8_t* decoded, int64_t decoded_row_bytes, int64_t num_rows,
               int64_t n_cols, const uint8_t* act, int64_t act_stride, int64_t num_tokens,
               float* y, int64_t y_stride) = nullptr;
};

// A weight dtype's layout of rows interleaved in groups of kInterleavedRows: interleave rewrites
// one group (kInterleavedRows rows of n_cols, one after another) in place into it, and tile is
// the TileDotFn of matrices so laid out (num_rows a multiple of kInterleavedRows, w_stride_bytes
// a row's share of a group), which reads tensor::BlockQ8_K rows at act + t * act_stride_bytes for
// any number of tokens, each token with the bits it has alone.
// tile_asking_for_lines is the same kernel, whose one-token passes also ask for each line ahead
// as the row kernels do (dispatch.h's InterleavedPassesAskForLines says which the CPU gets).
struct InterleavedPath {
  void (*interleave)(uint8_t* rows, int64_t n_cols) = nullptr;
  TileDotFn tile = nullptr;
  TileDotFn tile_asking_for_lines = nullptr;
};

struct KernelTable {
  const char* name;
  TileDotFn f32, f16, bf16;
  // Whether bf16 reads ActFormat::kBf16 activation rows (and multiplies bf16 pairs, AVX512_BF16)
  // instead of the caller's f32 rows.
  bool bf16_rounds_activations;
  TileDotFn q4_0, q4_1, q5_0, q5_1, q8_0;
  TileDotFn q2_k, q3_k, q4_k, q5_k, q6_k;
  // Activation encoders (act_quant.h): n_cols floats into n_cols / 32 or n_cols / 256 blocks.
  // Every table produces the same bits as the portable ones in act_quant.cc.
  void (*quantize_q8)(const float* x, int64_t n_cols, ActBlockQ8* out);
  void (*quantize_q8_k)(const float* x, int64_t n_cols, tensor::BlockQ8_K* out);
  void (*rms_norm)(const float* x, const float* weight, int64_t n, float eps, float* y);
  void (*swiglu)(const float* gate, const float* up, int64_t n, float* out);
  void (*silu)(float* x, int64_t n);  // in place
  void (*sigmoid_gate)(float* x, const float* gate, int64_t n);  // x[i] *= sigmoid(gate[i])
  void (*softmax)(float* x, int64_t n);
  float (*dot)(const float* a, const float* b, int64_t n);
  void (*axpy)(float a, const float* x, int64_t n, float* y);
  // Rotates the first n_rot dims of each head in place with a table of n_rot floats per factor:
  // kNeox: cos[n_rot / 2] then sin[n_rot / 2]; kNorm: each pair's cos twice, then (-sin, sin)
  // per pair, so that out = x * first + swap_pairs(x) * second.
  void (*rope)(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, RopeStyle style,
               const float* factors);
  AttendFn attend;
  AttendMergeFn attend_merge;
  // Whether attend, over tiled K caches (tensor/key_tiles.h), scores each query in int8 as the
  // sum of its int8 encoding (quantize_q8's ActBlockQ8) and that of what it leaves over.
  bool attend_rounds_q8_queries;
  // Whether attend, over V caches in spans (tensor/value_spans.h), encodes each query's weights
  // times the V scales as 15-bit integers per step and block of the head (x86/kv_values.inc): a
  // rounding of at most 1/65534 of the step's largest, so its result is near, not equal to, the
  // f32 one over the same values.
  bool attend_encodes_q8_value_weights;
  // The two vector steps of kernels::TopK, which narrows the candidates before sorting them:
  // maxima[b] = max of x[b * kTopKBlock, (b + 1) * kTopKBlock) for b < n_blocks, and the
  // indices i < n with x[i] >= threshold, ascending, written to `indices` (their count returned).
  void (*block_maxima)(const float* x, int64_t n_blocks, float* maxima);
  int64_t (*indices_at_least)(const float* x, int64_t n, float threshold, int32_t* indices);
  // `rounds` rounds of kFmaBurnChains independent multiply-adds of fma_lanes floats each, chain
  // c's lanes from FmaBurnChainStart(c); the result, the sum of every lane, depends on all of
  // them so that none can be dropped (MeasureFmaPeakGflops).
  float (*fma_burn)(int64_t rounds);
  int fma_lanes;
  // Null (the portable table), or `rounds` rounds of the int8 dot-product step the table's
  // quantised matrix kernels multiply with, in independent chains on codes of 1: dot_burn_macs
  // multiply-adds a round, and the result, the sum of every lane, is rounds * dot_burn_macs
  // (MeasureInt8DotPeakGops).
  int64_t (*dot_burn)(int64_t rounds);
  int dot_burn_macs;
  // Interleaves num_tokens (<= kMaxTileTokens) ActBlockQ8 rows of n_blocks blocks, the first at
  // rows and the next every row_stride bytes, into one tile of q8_tile_bytes(n_blocks) bytes in
  // this table's layout; both null in tables whose kernels read rows only.
  void (*build_q8_tiles)(const uint8_t* rows, int64_t row_stride, int num_tokens,
                         int64_t n_blocks, uint8_t* out);
  int64_t (*q8_tile_bytes)(int64_t n_blocks);
  // The same for tensor::BlockQ8_K rows of n_blocks super-blocks.
  void (*build_q8k_tiles)(const uint8_t* rows, int64_t row_stride, int num_tokens,
                          int64_t n_blocks, ActTileQ8KBlock* out);
  // Null, or how this table decodes rows of a weight dtype once for all the tiles of tokens
  // that read them (a RowDecoder with a null decode for dtypes it decodes as it reads).
  RowDecoder (*row_decoder)(tensor::DType type);
  // Null, or the wide path for a weight dtype (all null for dtypes it does not serve).
  WideQ8Path (*wide_q8)(tensor::DType type);
  // Null, or this table's interleaved layout for a weight dtype (both members null for dtypes
  // whose rows it reads as they lie).
  InterleavedPath (*interleaved)(tensor::DType type);
};

inline constexpr int kFmaBurnChains = 10;
// The value every lane of fma_burn's chain `chain` starts from: distinct, so that no two chains
// compute the same thing and none can be folded into another.
inline constexpr float FmaBurnChainStart(int chain) { return 1.0f + 0.0625f * chain; }
// Rows per group of an interleaved weight layout (InterleavedPath).
inline constexpr int kInterleavedRows = 16;
// Values per block of KernelTable::block_maxima: a whole number of vectors on every table.
inline constexpr int64_t kTopKBlock = 16;

// The K or V rows of one KV head: row `pos` of the head starts at base + pos * stride_bytes and
// holds head_dim elements of the cache's dtype (args.k_dtype or args.v_dtype).
struct KvHeadRows {
  const uint8_t* base;
  int64_t stride_bytes;
};
// The rows of the KV head whose slice starts at element kv_offset of each K (V) cache row.
KvHeadRows KeyHeadOf(const AttentionArgs& args, int64_t kv_offset);
KvHeadRows ValueHeadOf(const AttentionArgs& args, int64_t kv_offset);

// This thread's scratch for a kernel's per-call tables: at least `bytes` bytes, 64-byte aligned,
// kept between calls (a warm decode step allocates nothing) and valid until the thread's next
// call. Defined in baseline code, so that the ISA tables' translation units hold no containers
// (see x86/table_unit.inc).
void* KernelScratch(int64_t bytes);

// The tables. generic is portable C++; the x86 ones exist only in x86 builds and the NEON ones
// only in AArch64 builds, and each may be called only when the CPU supports it.
const KernelTable& GenericTable();
#if defined(DS_KERNELS_X86)
namespace avx2 {
const KernelTable& GetTable();
}  // namespace avx2
namespace avx512 {
const KernelTable& GetTable();
}  // namespace avx512
namespace avx512_bf16 {
const KernelTable& GetTable();
}  // namespace avx512_bf16
// The avx512_bf16 table's wide path (x86/amx.cc); callable only once the OS has granted the
// process AMX tile data (dispatch.cc asks).
namespace amx {
WideQ8Path WidePathFor(tensor::DType type);
}  // namespace amx
#endif
#if defined(DS_KERNELS_ARM)
namespace neon {
const KernelTable& GetTable();
}  // namespace neon
namespace neon_dotprod {
const KernelTable& GetTable();
}  // namespace neon_dotprod
#endif

}  // namespace ds::kernels::internal
