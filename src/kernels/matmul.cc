// MatVec / MatMul drivers: prepare the activations once per call (matmul_inputs.h), then split
// weight rows across the pool. Each task walks its rows in blocks small enough to stay in cache
// and, for every tile of up to kMaxTileTokens tokens (kMaxWideTileTokens on a table's wide path),
// runs the tile kernel over the block, so a weight row is read from memory once per call and
// reused for every token tile from L2.

#include <algorithm>
#include <numeric>
#include <vector>

#include "base/check.h"
#include "kernels/dispatch.h"
#include "kernels/kernels.h"
#include "kernels/matmul_inputs.h"
#include "kernels/parallel.h"

namespace ds::kernels {
namespace {

using internal::PreparedActivations;
using internal::WidePathFor;

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

internal::InterleavedPath InterleavedPathFor(tensor::DType type) {
  const internal::KernelTable& table = internal::Table();
  return table.interleaved != nullptr ? table.interleaved(type) : internal::InterleavedPath{};
}

// Interleaved rows (InterleaveRows) are read by the table's own kernel, whose groups of rows
// take BlockQ8_K rows for any number of tokens.
void InterleavedRows(const MatrixView& w, const PreparedActivations& act, int64_t n_tokens,
                     float* y, int64_t r0, int64_t r1) {
  const internal::InterleavedPath path = InterleavedPathFor(w.type);
  const internal::TileDotFn tile = path.tile;
  DS_CHECK_MSG(tile != nullptr, "interleaved rows need the table that interleaved them");
  if (n_tokens == 1) {
    const internal::TileDotFn one_token =
        internal::InterleavedPassesAskForLines() ? path.tile_asking_for_lines : tile;
    one_token(w.row(r0), w.row_bytes, r1 - r0, w.n_cols, act.rows, act.act_stride, 1, y + r0);
    return;
  }
  // A group of rows per call for every token: y is token-major.
  float group_out[internal::kInterleavedRows * internal::kMaxTileTokens];
  for (int64_t g = r0; g < r1; g += internal::kInterleavedRows) {
    for (int64_t t0 = 0; t0 < n_tokens; t0 += internal::kMaxTileTokens) {
      const int nt = static_cast<int>(std::min<int64_t>(internal::kMaxTileTokens, n_tokens - t0));
      tile(w.row(g), w.row_bytes, internal::kInterleavedRows, w.n_cols,
           act.rows + t0 * act.act_stride, act.act_stride, nt, group_out);
      for (int t = 0; t < nt; ++t) {
        for (int r = 0; r < internal::kInterleavedRows; ++r) {
          y[(t0 + t) * w.n_rows + g + r] = group_out[r * nt + t];
        }
      }
    }
  }
}

// Weight bytes a task processes before moving to the next token tile (fits L2 comfortably).
constexpr int64_t kRowBlockBytes = 64 * 1024;
// Rows of one block at most, which bounds the tile's output buffer on the stack.
constexpr int64_t kMaxRowBlock = 256;

int64_t RoundUp(int64_t n, int64_t multiple) { return (n + multiple - 1) / multiple * multiple; }

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
  if (w.interleaved) return InterleavedRows(w, act, n_tokens, y, r0, r1);
  const internal::KernelTable& table = internal::Table();
  const int64_t row_block = std::clamp<int64_t>(kRowBlockBytes / std::max<int64_t>(1, w.row_bytes),
                                                1, kMaxRowBlock);
  if (act.wide) {
    WideRows(WidePathFor(table, w.type, n_tokens), w, act, n_tokens, y, r0, r1, row_block);
    return;
  }
  const internal::TileDotFn tile_dot = TileDotFor(table, w.type);
  if (n_tokens == 1) {
    // One token reads each row once: blocks of rows would only repeat the kernel's set-up for
    // the token, which took a tenth of a cached 4096-column Q8_0 MatVec in its 15-row blocks.
    tile_dot(w.row(r0), w.row_bytes, r1 - r0, w.n_cols, act.rows, act.act_stride, 1, y + r0);
    return;
  }
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

bool CanInterleaveRows(const MatrixView& w) {
  return !w.interleaved && InterleavedPathFor(w.type).interleave != nullptr &&
         w.n_rows % internal::kInterleavedRows == 0 &&
         w.row_bytes == tensor::RowBytes(w.type, w.n_cols);
}

MatrixView InterleaveRows(const MatrixView& w, uint8_t* data) {
  DS_CHECK(CanInterleaveRows(w) && data == w.data);
  const int64_t group_bytes = internal::kInterleavedRows * w.row_bytes;
  const auto interleave = InterleavedPathFor(w.type).interleave;
  for (int64_t g = 0; g < w.n_rows / internal::kInterleavedRows; ++g) {
    interleave(data + g * group_bytes, w.n_cols);
  }
  MatrixView out = w;
  out.interleaved = true;
  return out;
}

void MatMul(const MatrixView& w, const float* x, int64_t n_tokens, float* y, ThreadPool* pool) {
  const MatMulJob job{w, x, n_tokens, y};
  MatMuls({&job, 1}, pool);
}

void MatVec(const MatrixView& w, const float* x, float* y, ThreadPool* pool) {
  MatMul(w, x, 1, y, pool);
}

void MatMuls(std::span<const MatMulJob> jobs, ThreadPool* pool) {
  // Per calling thread and kept across calls. The lambdas below name these references, not the
  // thread_local objects, which a worker would resolve to its own.
  thread_local internal::MatMulInputs input_storage;
  thread_local std::vector<int64_t> mac_start_storage;
  internal::MatMulInputs& inputs = input_storage;
  std::vector<int64_t>& mac_starts = mac_start_storage;
  const internal::KernelTable& table = internal::Table();
  for (const MatMulJob& job : jobs) {
    CheckShape(job.w);
    DS_CHECK(job.row_align >= 1);
  }
  if (!inputs.Prepare(jobs, pool)) return;

  // Tasks of equal multiply-adds: a task's share of a job is its rows, cut where the task's
  // share of the job's multiply-adds ends (on a wide path at whole groups of rows, since a
  // partial group costs a full tile product).
  mac_starts.assign(1, 0);
  for (const MatMulJob& job : jobs) {
    const int64_t macs = job.n_tokens > 0 ? job.w.n_rows * job.w.n_cols * job.n_tokens : 0;
    mac_starts.push_back(mac_starts.back() + macs);
  }
  if (mac_starts.back() == 0) return;
  const auto run = [&](size_t j, int64_t m0, int64_t m1) {
    const MatMulJob& job = jobs[j];
    const int64_t row_macs = job.w.n_cols * job.n_tokens;
    // Interleaved rows split at whole groups, as a wide path's.
    const int64_t group = std::lcm(
        job.row_align, job.w.interleaved
                           ? internal::kInterleavedRows
                           : std::max<int64_t>(
                                 1, WidePathFor(table, job.w.type, job.n_tokens).row_group));
    const auto row_at = [&](int64_t m) {
      return std::min(job.w.n_rows, RoundUp((m + row_macs - 1) / row_macs, group));
    };
    const int64_t r0 = row_at(m0), r1 = row_at(m1);
    if (r0 >= r1) return;
    MatMulRows(job.w, inputs.ForJob(j), job.n_tokens, job.y, r0, r1);
    if (job.rows_done != nullptr) (*job.rows_done)(r0, r1);
  };
  internal::ForEachItemRange(pool, mac_starts, internal::kMinTaskMacs, run);
}

}  // namespace ds::kernels
