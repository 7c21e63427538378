// MatVec / MatMul drivers: prepare the activations once per call, then split weight rows across
// the pool. Each task walks its rows in blocks small enough to stay in cache and, for every tile
// of up to kMaxTileTokens tokens (kMaxWideTileTokens on a table's wide path), runs the tile kernel
// over the block, so a weight row is read from memory once per call and reused for every token
// tile from L2.

#include <algorithm>
#include <vector>

#include "base/check.h"
#include "kernels/act_quant.h"
#include "kernels/dispatch.h"
#include "kernels/kernels.h"
#include "kernels/parallel.h"

namespace ds::kernels {
namespace {

using internal::ActFormat;

internal::TileDotFn TileDotFor(const internal::KernelTable& table, tensor::DType type) {
  using tensor::DType;
  switch (type) {
    case DType::kF32:
      return table.f32;
    case DType::kF16:
      return table.f16;
    case DType::kBF16:
      return table.bf16;
    case DType::kQ4_0:
      return table.q4_0;
    case DType::kQ4_1:
      return table.q4_1;
    case DType::kQ5_0:
      return table.q5_0;
    case DType::kQ5_1:
      return table.q5_1;
    case DType::kQ8_0:
      return table.q8_0;
    case DType::kQ2_K:
      return table.q2_k;
    case DType::kQ3_K:
      return table.q3_k;
    case DType::kQ4_K:
      return table.q4_k;
    case DType::kQ5_K:
      return table.q5_k;
    case DType::kQ6_K:
      return table.q6_k;
    default:
      break;
  }
  DS_CHECK_MSG(false, "MatVec/MatMul: unsupported weight dtype");
  return nullptr;
}

// Multiply-adds per task below which splitting across threads costs more than it saves.
constexpr int64_t kMinTaskMacs = 1 << 16;
// Weight bytes a task processes before moving to the next token tile (fits L2 comfortably).
constexpr int64_t kRowBlockBytes = 64 * 1024;
// Rows of one block at most, which bounds the tile's output buffer on the stack.
constexpr int64_t kMaxRowBlock = 256;

int64_t RoundUp(int64_t n, int64_t multiple) { return (n + multiple - 1) / multiple * multiple; }

// The table's wide path for a matrix of `type` against n_tokens tokens, or all nulls.
internal::WideQ8Path WidePathFor(const internal::KernelTable& table, tensor::DType type,
                                 int64_t n_tokens) {
  if (n_tokens <= internal::kMaxTileTokens || table.wide_q8 == nullptr) return {};
  return table.wide_q8(type);
}

// Activations in the form a weight dtype's kernel reads, built once for every matrix of a call.
struct PreparedActivations {
  const uint8_t* rows = nullptr;   // n_tokens rows of act_stride bytes
  int64_t act_stride = 0;
  const uint8_t* tiles = nullptr;  // interleaved tiles of kMaxTileTokens tokens, or null
  int64_t tile_bytes = 0;
  bool wide = false;  // the rows feed the table's wide path, which reads them as they are
};

// Encodes x[n_tokens][n_cols] for `format` (and, unless for the wide path, as tiles) into the two
// buffers (grown as needed, kept by the caller across calls).
PreparedActivations PrepareActivations(ActFormat format, bool wide, int64_t n_cols, const float* x,
                                       int64_t n_tokens, ThreadPool* pool,
                                       std::vector<uint8_t>* act_buffer,
                                       std::vector<uint8_t>* tile_buffer) {
  PreparedActivations prepared;
  prepared.act_stride = internal::ActRowBytes(format, n_cols);
  prepared.rows = reinterpret_cast<const uint8_t*>(x);
  if (format != ActFormat::kF32) {
    // The wide path reads whole tiles of rows: the last tile's missing ones are zeros.
    const int64_t padding_rows = wide ? internal::kMaxWideTileTokens - 1 : 0;
    act_buffer->resize(static_cast<size_t>(prepared.act_stride * (n_tokens + padding_rows)));
    uint8_t* dst = act_buffer->data();
    std::fill(act_buffer->begin() + prepared.act_stride * n_tokens, act_buffer->end(), 0);
    const int64_t stride = prepared.act_stride;
    internal::ParallelRanges(
        pool, n_tokens, std::max<int64_t>(1, kMinTaskMacs / n_cols), [&](int64_t t0, int64_t t1) {
          for (int64_t t = t0; t < t1; ++t) {
            internal::QuantizeActRow(format, x + t * n_cols, n_cols, dst + t * stride);
          }
        });
    prepared.rows = dst;
  }
  prepared.wide = wide;
  const internal::KernelTable& table = internal::Table();
  const bool legacy = format == ActFormat::kQ8Blocks;
  const bool tiled = !wide && n_tokens > 1 && ((legacy && table.build_q8_tiles) ||
                                      (format == ActFormat::kQ8KBlocks && table.build_q8k_tiles));
  if (!tiled) return prepared;
  const int64_t n_blocks = n_cols / (legacy ? tensor::kQK : tensor::kQK_K);
  prepared.tile_bytes =
      legacy ? table.q8_tile_bytes(n_blocks)
             : n_blocks * static_cast<int64_t>(sizeof(internal::ActTileQ8KBlock));
  const int64_t n_tiles = (n_tokens + internal::kMaxTileTokens - 1) / internal::kMaxTileTokens;
  tile_buffer->resize(static_cast<size_t>(n_tiles * prepared.tile_bytes));
  uint8_t* tiles = tile_buffer->data();
  internal::ParallelRanges(pool, n_tiles, 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t t0 = i * internal::kMaxTileTokens;
      const int nt = static_cast<int>(std::min<int64_t>(internal::kMaxTileTokens, n_tokens - t0));
      const uint8_t* act = prepared.rows + t0 * prepared.act_stride;
      uint8_t* tile = tiles + i * prepared.tile_bytes;
      if (legacy) {
        table.build_q8_tiles(act, prepared.act_stride, nt, n_blocks, tile);
      } else {
        table.build_q8k_tiles(act, prepared.act_stride, nt, n_blocks,
                              reinterpret_cast<internal::ActTileQ8KBlock*>(tile));
      }
    }
  });
  prepared.tiles = tiles;
  return prepared;
}

// Rows [rb, rb + n_rows) of w decoded by `decode` into this thread's buffer (kept between calls),
// which holds n_rows rounded up to row_group rows of decoded_row_bytes.
const uint8_t* DecodeRowBlock(void (*decode)(const uint8_t*, int64_t, int64_t, int64_t, uint8_t*),
                              int64_t decoded_row_bytes, int64_t row_group, const MatrixView& w,
                              int64_t rb, int64_t n_rows) {
  thread_local std::vector<uint8_t> decoded;
  decoded.resize(static_cast<size_t>(RoundUp(n_rows, row_group) * decoded_row_bytes));
  decode(w.row(rb), w.row_bytes, n_rows, w.n_cols, decoded.data());
  return decoded.data();
}

// MatMulRows on the table's wide path: each block of rows (whole groups of path.row_group, since
// a partial group costs a full tile product) decoded once, then multiplied by every token,
// written into y in place.
void WideRows(const internal::WideQ8Path& path, const MatrixView& w,
              const PreparedActivations& act, int64_t n_tokens, float* y, int64_t r0, int64_t r1,
              int64_t row_block) {
  const int64_t decoded_row_bytes = path.row_bytes(w.n_cols);
  const int64_t group_block = std::max(path.row_group, row_block / path.row_group * path.row_group);
  for (int64_t rb = r0; rb < r1; rb += group_block) {
    const int64_t n_rows = std::min(r1 - rb, group_block);
    const uint8_t* decoded =
        DecodeRowBlock(path.decode, decoded_row_bytes, path.row_group, w, rb, n_rows);
    path.tile(decoded, decoded_row_bytes, n_rows, w.n_cols, act.rows, act.act_stride, n_tokens,
              y + rb, w.n_rows);
  }
}

// Rows [r0, r1) of y[n_tokens][w.n_rows] = act * W^T, in blocks small enough to stay in cache,
// each block against every tile of tokens in turn.
void MatMulRows(const MatrixView& w, const PreparedActivations& act, int64_t n_tokens, float* y,
                int64_t r0, int64_t r1) {
  const internal::KernelTable& table = internal::Table();
  const int64_t row_block = std::clamp<int64_t>(kRowBlockBytes / std::max<int64_t>(1, w.row_bytes),
                                                1, kMaxRowBlock);
  if (act.wide) {
    WideRows(WidePathFor(table, w.type, n_tokens), w, act, n_tokens, y, r0, r1, row_block);
    return;
  }
  const internal::TileDotFn tile_dot = TileDotFor(table, w.type);
  // Rows read by more than one tile of tokens are decoded once per row block, not once per tile
  // (decoding was about a fifth of the K-quant tile kernels' time).
  const internal::RowDecoder decoder =
      act.tiles != nullptr && n_tokens > internal::kMaxTileTokens && table.row_decoder != nullptr
          ? table.row_decoder(w.type)
          : internal::RowDecoder{};
  const bool decode_once = decoder.decode != nullptr;
  const int64_t decoded_row_bytes = decode_once ? decoder.row_bytes(w.n_cols) : 0;
  float tile_out[kMaxRowBlock * internal::kMaxTileTokens];
  for (int64_t rb = r0; rb < r1; rb += row_block) {
    const int64_t n_rows = std::min(r1 - rb, row_block);
    const uint8_t* decoded =
        decode_once ? DecodeRowBlock(decoder.decode, decoded_row_bytes, decoder.row_group, w, rb,
                                     n_rows)
                    : nullptr;
    for (int64_t t0 = 0; t0 < n_tokens; t0 += internal::kMaxTileTokens) {
      const int nt = static_cast<int>(std::min<int64_t>(internal::kMaxTileTokens, n_tokens - t0));
      const uint8_t* tile_act = act.tiles != nullptr && nt > 1
                                    ? act.tiles + (t0 / internal::kMaxTileTokens) * act.tile_bytes
                                    : act.rows + t0 * act.act_stride;
      if (nt == 1) {
        // The tile's layout (row-major rows x tokens) is then y's.
        tile_dot(w.row(rb), w.row_bytes, n_rows, w.n_cols, tile_act, act.act_stride, 1,
                 y + t0 * w.n_rows + rb);
        continue;
      }
      // The lines of y this tile writes are rarely cached (a prompt's y outgrows L2): asking for
      // them first overlaps their fetch with the tile's arithmetic instead of stalling the stores.
      for (int t = 0; t < nt; ++t) {
        const float* y_row = y + (t0 + t) * w.n_rows + rb;
        for (int64_t r = 0; r < n_rows; r += 16) __builtin_prefetch(y_row + r, 1);
        __builtin_prefetch(y_row + n_rows - 1, 1);
      }
      if (decode_once) {
        decoder.tile(decoded, decoded_row_bytes, n_rows, w.n_cols, tile_act, act.act_stride, nt,
                     tile_out);
      } else {
        tile_dot(w.row(rb), w.row_bytes, n_rows, w.n_cols, tile_act, act.act_stride, nt,
                 tile_out);
      }
      // Token-major, so that the writes to y are contiguous runs of the block's rows.
      for (int t = 0; t < nt; ++t) {
        float* y_row = y + (t0 + t) * w.n_rows + rb;
        for (int64_t r = 0; r < n_rows; ++r) y_row[r] = tile_out[r * nt + t];
      }
    }
  }
}

void CheckShape(const MatrixView& w) {
  DS_CHECK(w.n_cols % tensor::Traits(w.type).block_elems == 0);
  DS_CHECK(w.row_bytes >= tensor::RowBytes(w.type, w.n_cols));
}

}  // namespace

void MatMul(const MatrixView& w, const float* x, int64_t n_tokens, float* y, ThreadPool* pool) {
  const MatMulJob job{w, x, y};
  MatMuls({&job, 1}, n_tokens, pool);
}

void MatVec(const MatrixView& w, const float* x, float* y, ThreadPool* pool) {
  MatMul(w, x, 1, y, pool);
}

void MatMuls(std::span<const MatMulJob> jobs, int64_t n_tokens, ThreadPool* pool) {
  if (n_tokens <= 0 || jobs.empty()) return;
  // Per calling thread and kept across calls; the workers read these, not their own.
  thread_local std::vector<int64_t> row_start_storage, input_of_storage;
  thread_local std::vector<PreparedActivations> prepared_storage;
  thread_local std::vector<std::vector<uint8_t>> act_buffers, tile_buffers;
  std::vector<int64_t>& row_starts = row_start_storage;
  std::vector<int64_t>& input_of = input_of_storage;  // job -> its entry of `prepared`
  std::vector<PreparedActivations>& prepared = prepared_storage;
  const internal::KernelTable& table = internal::Table();
  row_starts.assign(jobs.size() + 1, 0);
  input_of.assign(jobs.size(), -1);
  prepared.clear();
  int64_t macs = 0;
  for (size_t j = 0; j < jobs.size(); ++j) {
    const MatrixView& w = jobs[j].w;
    CheckShape(w);
    row_starts[j + 1] = row_starts[j] + w.n_rows;
    macs += w.n_rows * w.n_cols;
    // Activations are encoded once per distinct input and format: a MoE layer's gate and up
    // products, or a layer's projections, all read the same x.
    const ActFormat format = internal::ActFormatFor(w.type);
    const bool wide = WidePathFor(table, w.type, n_tokens).tile != nullptr;
    for (size_t e = 0; e < j && input_of[j] < 0; ++e) {
      if (jobs[e].x == jobs[j].x && jobs[e].w.n_cols == w.n_cols &&
          internal::ActFormatFor(jobs[e].w.type) == format && prepared[input_of[e]].wide == wide) {
        input_of[j] = input_of[e];
      }
    }
    if (input_of[j] >= 0) continue;
    input_of[j] = static_cast<int64_t>(prepared.size());
    if (act_buffers.size() <= prepared.size()) {
      act_buffers.resize(prepared.size() + 1);
      tile_buffers.resize(prepared.size() + 1);
    }
    prepared.push_back(PrepareActivations(format, wide, w.n_cols, jobs[j].x, n_tokens, pool,
                                          &act_buffers[prepared.size()],
                                          &tile_buffers[prepared.size()]));
  }
  const int64_t total_rows = row_starts.back();
  if (total_rows == 0) return;
  const int64_t grain = std::max<int64_t>(
      1, kMinTaskMacs * total_rows / std::max<int64_t>(1, macs * n_tokens));
  internal::ParallelRanges(pool, total_rows, grain, [&](int64_t r0, int64_t r1) {
    size_t j = std::upper_bound(row_starts.begin(), row_starts.end(), r0) - row_starts.begin() - 1;
    for (int64_t r = r0; r < r1; ++j) {
      const int64_t end = std::min(r1, row_starts[j + 1]);
      MatMulRows(jobs[j].w, prepared[input_of[j]], n_tokens, jobs[j].y, r - row_starts[j],
                 end - row_starts[j]);
      r = end;
    }
  });
}

}  // namespace ds::kernels
