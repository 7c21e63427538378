// MatVec / MatMul drivers: prepare the activations once per call, then split weight rows across
// the pool. Each task walks its rows in blocks small enough to stay in cache and, for every tile
// of up to kMaxTileTokens tokens (kMaxWideTileTokens on a table's wide path), runs the tile kernel
// over the block, so a weight row is read from memory once per call and reused for every token
// tile from L2.

#include <algorithm>
#include <cstring>
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

// One distinct input of a MatMuls call: x[n_tokens][n_cols] as the jobs that read it need it,
// or, when gathered, rows x_rows[t] of another input (`source`, an index into the call's inputs)
// copied from its encoding.
struct ActInput {
  const float* x = nullptr;
  int64_t n_cols = 0;
  int64_t n_tokens = 0;
  ActFormat format = ActFormat::kF32;
  bool wide = false;  // read by the table's wide path, which takes the rows as they are
  // Encoded only to be gathered from: rows alone, no tiles or padding.
  bool gather_source = false;
  const int64_t* x_rows = nullptr;
  int64_t source = -1;
};

// Activations in the form a weight dtype's kernel reads, built once for every matrix of a call.
struct PreparedActivations {
  const uint8_t* rows = nullptr;   // n_tokens rows of act_stride bytes
  int64_t act_stride = 0;
  const uint8_t* tiles = nullptr;  // interleaved tiles of kMaxTileTokens tokens, or null
  int64_t tile_bytes = 0;
  bool wide = false;
};

bool EncodedAsTiles(const ActInput& in) {
  const internal::KernelTable& table = internal::Table();
  return !in.wide && !in.gather_source && in.n_tokens > 1 &&
         ((in.format == ActFormat::kQ8Blocks && table.build_q8_tiles) ||
          (in.format == ActFormat::kQ8KBlocks && table.build_q8k_tiles));
}

int64_t TileCount(int64_t n_tokens) {
  return (n_tokens + internal::kMaxTileTokens - 1) / internal::kMaxTileTokens;
}

// Lays out the encoding of `in` in the two buffers (grown as needed, kept by the caller across
// calls) and returns where it will be; EncodeRows and EncodeTiles fill it.
PreparedActivations LayOut(const ActInput& in, std::vector<uint8_t>* act_buffer,
                           std::vector<uint8_t>* tile_buffer) {
  PreparedActivations prepared;
  prepared.act_stride = internal::ActRowBytes(in.format, in.n_cols);
  prepared.rows = reinterpret_cast<const uint8_t*>(in.x);
  prepared.wide = in.wide;
  if (in.format == ActFormat::kF32 && in.x_rows == nullptr) return prepared;
  // The wide path reads whole tiles of rows: the last tile's missing ones are zeros.
  const int64_t padding_rows = in.wide && !in.gather_source ? internal::kMaxWideTileTokens - 1 : 0;
  act_buffer->resize(static_cast<size_t>(prepared.act_stride * (in.n_tokens + padding_rows)));
  std::fill(act_buffer->begin() + prepared.act_stride * in.n_tokens, act_buffer->end(), 0);
  prepared.rows = act_buffer->data();
  if (!EncodedAsTiles(in)) return prepared;
  const internal::KernelTable& table = internal::Table();
  const bool legacy = in.format == ActFormat::kQ8Blocks;
  const int64_t n_blocks = in.n_cols / (legacy ? tensor::kQK : tensor::kQK_K);
  prepared.tile_bytes =
      legacy ? table.q8_tile_bytes(n_blocks)
             : n_blocks * static_cast<int64_t>(sizeof(internal::ActTileQ8KBlock));
  tile_buffer->resize(static_cast<size_t>(TileCount(in.n_tokens) * prepared.tile_bytes));
  prepared.tiles = tile_buffer->data();
  return prepared;
}

// Encodes rows [t0, t1) of `in` into dst, the rows LayOut gave it.
void EncodeRows(const ActInput& in, const PreparedActivations& prepared, uint8_t* dst, int64_t t0,
                int64_t t1) {
  for (int64_t t = t0; t < t1; ++t) {
    internal::QuantizeActRow(in.format, in.x + t * in.n_cols, in.n_cols,
                             dst + t * prepared.act_stride);
  }
}

// Copies rows [t0, t1) of a gathered input `in` from its source's encoding into dst, the rows
// LayOut gave it.
void GatherRows(const ActInput& in, const PreparedActivations& source, uint8_t* dst, int64_t t0,
                int64_t t1) {
  for (int64_t t = t0; t < t1; ++t) {
    std::memcpy(dst + t * source.act_stride, source.rows + in.x_rows[t] * source.act_stride,
                static_cast<size_t>(source.act_stride));
  }
}

// Interleaves tiles [i0, i1) of the encoded rows of `in` (after EncodeRows) into `tiles`, where
// LayOut put them.
void EncodeTiles(const ActInput& in, const PreparedActivations& prepared, uint8_t* tiles,
                 int64_t i0, int64_t i1) {
  const internal::KernelTable& table = internal::Table();
  const bool legacy = in.format == ActFormat::kQ8Blocks;
  const int64_t n_blocks = in.n_cols / (legacy ? tensor::kQK : tensor::kQK_K);
  for (int64_t i = i0; i < i1; ++i) {
    const int64_t t0 = i * internal::kMaxTileTokens;
    const int nt = static_cast<int>(std::min<int64_t>(internal::kMaxTileTokens, in.n_tokens - t0));
    const uint8_t* act = prepared.rows + t0 * prepared.act_stride;
    uint8_t* tile = tiles + i * prepared.tile_bytes;
    if (legacy) {
      table.build_q8_tiles(act, prepared.act_stride, nt, n_blocks, tile);
    } else {
      table.build_q8k_tiles(act, prepared.act_stride, nt, n_blocks,
                            reinterpret_cast<internal::ActTileQ8KBlock*>(tile));
    }
  }
}

// Runs fn(item, begin, end) over the items' index ranges [0, count_i), all items in one parallel
// pass: `starts` holds the running sums of the counts (starts[0] = 0, one more entry than items).
void ForEachItemRange(ThreadPool* pool, const std::vector<int64_t>& starts, int64_t grain,
                      FunctionRef<void(size_t, int64_t, int64_t)> fn) {
  internal::ParallelRanges(pool, starts.back(), grain, [&](int64_t b0, int64_t b1) {
    size_t i = std::upper_bound(starts.begin(), starts.end(), b0) - starts.begin() - 1;
    for (; i + 1 < starts.size() && starts[i] < b1; ++i) {
      const int64_t begin = std::max(b0, starts[i]) - starts[i];
      const int64_t end = std::min(b1, starts[i + 1]) - starts[i];
      if (begin < end) fn(i, begin, end);
    }
  });
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
  const MatMulJob job{w, x, n_tokens, y};
  MatMuls({&job, 1}, pool);
}

void MatVec(const MatrixView& w, const float* x, float* y, ThreadPool* pool) {
  MatMul(w, x, 1, y, pool);
}

void MatMuls(std::span<const MatMulJob> jobs, ThreadPool* pool) {
  // Per calling thread and kept across calls. The lambdas below name these references, not the
  // thread_local objects, which a worker would resolve to its own.
  thread_local std::vector<ActInput> input_storage;
  thread_local std::vector<PreparedActivations> prepared_storage;
  thread_local std::vector<int64_t> input_of_storage, row_start_storage, gather_start_storage,
      tile_start_storage, mac_start_storage;
  thread_local std::vector<std::vector<uint8_t>> act_buffer_storage, tile_buffer_storage;
  std::vector<ActInput>& inputs = input_storage;
  std::vector<PreparedActivations>& prepared = prepared_storage;
  std::vector<int64_t>& input_of = input_of_storage;  // job -> its entry of `inputs`
  std::vector<int64_t>& row_starts = row_start_storage;
  std::vector<int64_t>& gather_starts = gather_start_storage;
  std::vector<int64_t>& tile_starts = tile_start_storage;
  std::vector<int64_t>& mac_starts = mac_start_storage;
  std::vector<std::vector<uint8_t>>& act_buffers = act_buffer_storage;
  std::vector<std::vector<uint8_t>>& tile_buffers = tile_buffer_storage;
  const internal::KernelTable& table = internal::Table();
  inputs.clear();
  prepared.clear();
  input_of.assign(jobs.size(), -1);
  // Activations are encoded once per distinct input and format: a MoE layer's gate and up
  // products, or a layer's projections, all read the same x, and its experts gather their
  // tokens' rows from one encoding of the layer's input.
  const auto find_or_add = [&](const ActInput& in) {
    for (size_t e = 0; e < inputs.size(); ++e) {
      const ActInput& other = inputs[e];
      if (other.x == in.x && other.n_cols == in.n_cols && other.format == in.format &&
          other.gather_source == in.gather_source &&
          (in.gather_source || (other.n_tokens == in.n_tokens && other.wide == in.wide &&
                                other.x_rows == in.x_rows))) {
        return static_cast<int64_t>(e);
      }
    }
    inputs.push_back(in);
    return static_cast<int64_t>(inputs.size()) - 1;
  };
  for (size_t j = 0; j < jobs.size(); ++j) {
    const MatMulJob& job = jobs[j];
    CheckShape(job.w);
    if (job.n_tokens <= 0 || job.w.n_rows == 0) continue;
    ActInput in{job.x, job.w.n_cols, job.n_tokens, internal::ActFormatFor(job.w.type),
                WidePathFor(table, job.w.type, job.n_tokens).tile != nullptr};
    if (job.x_rows != nullptr) {
      const int64_t rows_read = *std::max_element(job.x_rows, job.x_rows + job.n_tokens) + 1;
      DS_CHECK(*std::min_element(job.x_rows, job.x_rows + job.n_tokens) >= 0);
      const int64_t source =
          find_or_add({job.x, job.w.n_cols, rows_read, in.format, false, true, nullptr, -1});
      inputs[source].n_tokens = std::max(inputs[source].n_tokens, rows_read);
      in.x_rows = job.x_rows;
      in.source = source;
    }
    input_of[j] = find_or_add(in);
  }
  if (inputs.empty()) return;
  if (act_buffers.size() < inputs.size()) {
    act_buffers.resize(inputs.size());
    tile_buffers.resize(inputs.size());
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    prepared.push_back(LayOut(inputs[i], &act_buffers[i], &tile_buffers[i]));
  }

  // Every input's rows in one parallel pass, the gathered ones' in another, then every input's
  // tiles in a third.
  row_starts.assign(1, 0);
  gather_starts.assign(1, 0);
  tile_starts.assign(1, 0);
  int64_t encoded_values = 0, gathered_bytes = 0;
  for (const ActInput& in : inputs) {
    const bool gathered = in.x_rows != nullptr;
    const bool encoded = in.format != ActFormat::kF32 && !gathered;
    row_starts.push_back(row_starts.back() + (encoded ? in.n_tokens : 0));
    gather_starts.push_back(gather_starts.back() + (gathered ? in.n_tokens : 0));
    tile_starts.push_back(tile_starts.back() + (EncodedAsTiles(in) ? TileCount(in.n_tokens) : 0));
    if (encoded) encoded_values += in.n_tokens * in.n_cols;
    if (gathered) gathered_bytes += in.n_tokens * internal::ActRowBytes(in.format, in.n_cols);
  }
  if (row_starts.back() > 0) {
    const int64_t grain =
        std::max<int64_t>(1, kMinTaskMacs * row_starts.back() / std::max<int64_t>(1, encoded_values));
    ForEachItemRange(pool, row_starts, grain, [&](size_t i, int64_t t0, int64_t t1) {
      EncodeRows(inputs[i], prepared[i], act_buffers[i].data(), t0, t1);
    });
  }
  if (gather_starts.back() > 0) {
    const int64_t grain = std::max<int64_t>(
        1, kMinTaskMacs * gather_starts.back() / std::max<int64_t>(1, gathered_bytes));
    ForEachItemRange(pool, gather_starts, grain, [&](size_t i, int64_t t0, int64_t t1) {
      GatherRows(inputs[i], prepared[inputs[i].source], act_buffers[i].data(), t0, t1);
    });
  }
  if (tile_starts.back() > 0) {
    ForEachItemRange(pool, tile_starts, 1, [&](size_t i, int64_t i0, int64_t i1) {
      EncodeTiles(inputs[i], prepared[i], tile_buffers[i].data(), i0, i1);
    });
  }

  // Tasks of equal multiply-adds: a task's share of a job is its rows, cut where the task's
  // share of the job's multiply-adds ends (on a wide path at whole groups of rows, since a
  // partial group costs a full tile product).
  mac_starts.assign(1, 0);
  for (const MatMulJob& job : jobs) {
    const int64_t macs = job.n_tokens > 0 ? job.w.n_rows * job.w.n_cols * job.n_tokens : 0;
    mac_starts.push_back(mac_starts.back() + macs);
  }
  if (mac_starts.back() == 0) return;
  ForEachItemRange(pool, mac_starts, kMinTaskMacs, [&](size_t j, int64_t m0, int64_t m1) {
    const MatMulJob& job = jobs[j];
    const int64_t row_macs = job.w.n_cols * job.n_tokens;
    const int64_t group = std::max<int64_t>(1, WidePathFor(table, job.w.type, job.n_tokens).row_group);
    const auto row_at = [&](int64_t m) {
      return std::min(job.w.n_rows, RoundUp((m + row_macs - 1) / row_macs, group));
    };
    const int64_t r0 = row_at(m0), r1 = row_at(m1);
    if (r0 < r1) MatMulRows(job.w, prepared[input_of[j]], job.n_tokens, job.y, r0, r1);
  });
}

}  // namespace ds::kernels
