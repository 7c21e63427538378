#include "kernels/matmul_inputs.h"

#include <algorithm>
#include <cstring>

#include "base/check.h"
#include "kernels/dispatch.h"
#include "kernels/parallel.h"

namespace ds::kernels::internal {
namespace {

using Input = MatMulInputs::Input;

bool EncodedAsTiles(const Input& in) {
  const KernelTable& table = Table();
  return !in.wide && !in.gather_source && !in.rows_only && in.n_tokens > 1 &&
         ((in.format == ActFormat::kQ8Blocks && table.build_q8_tiles) ||
          (in.format == ActFormat::kQ8KBlocks && table.build_q8k_tiles));
}

int64_t TileCount(int64_t n_tokens) { return (n_tokens + kMaxTileTokens - 1) / kMaxTileTokens; }

// Blocks per row of an input encoded as tiles: Q8_0-style blocks or Q8_K super-blocks.
int64_t TiledBlocks(const Input& in) {
  return in.n_cols / (in.format == ActFormat::kQ8Blocks ? tensor::kQK : tensor::kQK_K);
}

// Lays out the encoding of `in` in the two buffers (grown as needed, kept by the caller across
// calls) and returns where it will be; EncodeRows and EncodeTiles fill it.
PreparedActivations LayOut(const Input& in, std::vector<uint8_t>* act_buffer,
                           std::vector<uint8_t>* tile_buffer) {
  PreparedActivations prepared;
  prepared.act_stride = ActRowBytes(in.format, in.n_cols);
  prepared.rows = reinterpret_cast<const uint8_t*>(in.x);
  prepared.wide = in.wide;
  if (in.format == ActFormat::kF32 && in.x_rows == nullptr) return prepared;
  // The wide path reads whole tiles of rows: the last tile's missing ones are zeros.
  const int64_t padding_rows = in.wide && !in.gather_source ? kMaxWideTileTokens - 1 : 0;
  act_buffer->resize(static_cast<size_t>(prepared.act_stride * (in.n_tokens + padding_rows)));
  std::fill(act_buffer->begin() + prepared.act_stride * in.n_tokens, act_buffer->end(), 0);
  prepared.rows = act_buffer->data();
  if (!EncodedAsTiles(in)) return prepared;
  const int64_t n_blocks = TiledBlocks(in);
  prepared.tile_bytes = in.format == ActFormat::kQ8Blocks
                            ? Table().q8_tile_bytes(n_blocks)
                            : n_blocks * static_cast<int64_t>(sizeof(ActTileQ8KBlock));
  tile_buffer->resize(static_cast<size_t>(TileCount(in.n_tokens) * prepared.tile_bytes));
  prepared.tiles = tile_buffer->data();
  return prepared;
}

// Encodes rows [t0, t1) of `in` into dst, the rows LayOut gave it.
void EncodeRows(const Input& in, const PreparedActivations& prepared, uint8_t* dst, int64_t t0,
                int64_t t1) {
  for (int64_t t = t0; t < t1; ++t) {
    QuantizeActRow(in.format, in.x + t * in.n_cols, in.n_cols, dst + t * prepared.act_stride);
  }
}

// Copies rows [t0, t1) of a gathered input `in` from its source's encoding into dst, the rows
// LayOut gave it.
void GatherRows(const Input& in, const PreparedActivations& source, uint8_t* dst, int64_t t0,
                int64_t t1) {
  for (int64_t t = t0; t < t1; ++t) {
    std::memcpy(dst + t * source.act_stride, source.rows + in.x_rows[t] * source.act_stride,
                static_cast<size_t>(source.act_stride));
  }
}

// Interleaves tiles [i0, i1) of the encoded rows of `in` (after EncodeRows) into `tiles`, where
// LayOut put them.
void EncodeTiles(const Input& in, const PreparedActivations& prepared, uint8_t* tiles,
                 int64_t i0, int64_t i1) {
  const KernelTable& table = Table();
  const bool legacy = in.format == ActFormat::kQ8Blocks;
  const int64_t n_blocks = TiledBlocks(in);
  for (int64_t i = i0; i < i1; ++i) {
    const int64_t t0 = i * kMaxTileTokens;
    const int nt = static_cast<int>(std::min<int64_t>(kMaxTileTokens, in.n_tokens - t0));
    const uint8_t* act = prepared.rows + t0 * prepared.act_stride;
    uint8_t* tile = tiles + i * prepared.tile_bytes;
    if (legacy) {
      table.build_q8_tiles(act, prepared.act_stride, nt, n_blocks, tile);
    } else {
      table.build_q8k_tiles(act, prepared.act_stride, nt, n_blocks,
                            reinterpret_cast<ActTileQ8KBlock*>(tile));
    }
  }
}

}  // namespace

WideQ8Path WidePathFor(const KernelTable& table, tensor::DType type, int64_t n_tokens) {
  if (n_tokens <= kMaxTileTokens || table.wide_q8 == nullptr) return {};
  return table.wide_q8(type);
}

bool MatMulInputs::Prepare(std::span<const MatMulJob> jobs, ThreadPool* pool) {
  inputs_.clear();
  prepared_.clear();
  input_of_.assign(jobs.size(), -1);
  // Activations are encoded once per distinct input and format: a MoE layer's gate and up
  // products, or a layer's projections, all read the same x, and its experts gather their
  // tokens' rows from one encoding of the layer's input.
  const auto find_or_add = [&](const Input& in) {
    for (size_t e = 0; e < inputs_.size(); ++e) {
      Input& other = inputs_[e];
      if (other.x == in.x && other.n_cols == in.n_cols && other.format == in.format &&
          other.gather_source == in.gather_source &&
          (in.gather_source || (other.n_tokens == in.n_tokens && other.wide == in.wide &&
                                other.x_rows == in.x_rows))) {
        other.rows_only = other.rows_only && in.rows_only;  // tiles if any reader takes them
        return static_cast<int64_t>(e);
      }
    }
    inputs_.push_back(in);
    return static_cast<int64_t>(inputs_.size()) - 1;
  };
  for (size_t j = 0; j < jobs.size(); ++j) {
    const MatMulJob& job = jobs[j];
    if (job.n_tokens <= 0 || job.w.n_rows == 0) continue;
    Input in{job.x, job.w.n_cols, job.n_tokens, ActFormatFor(job.w.type),
             WidePathFor(Table(), job.w.type, job.n_tokens).tile != nullptr};
    if (job.x_rows != nullptr) {
      const int64_t rows_read = *std::max_element(job.x_rows, job.x_rows + job.n_tokens) + 1;
      DS_CHECK(*std::min_element(job.x_rows, job.x_rows + job.n_tokens) >= 0);
      const int64_t source =
          find_or_add({job.x, job.w.n_cols, rows_read, in.format, false, true, nullptr, -1});
      inputs_[source].n_tokens = std::max(inputs_[source].n_tokens, rows_read);
      in.x_rows = job.x_rows;
      in.source = source;
    }
    in.rows_only = job.w.interleaved;
    input_of_[j] = find_or_add(in);
  }
  if (inputs_.empty()) return false;
  if (act_buffers_.size() < inputs_.size()) {
    act_buffers_.resize(inputs_.size());
    tile_buffers_.resize(inputs_.size());
  }
  for (size_t i = 0; i < inputs_.size(); ++i) {
    prepared_.push_back(LayOut(inputs_[i], &act_buffers_[i], &tile_buffers_[i]));
  }

  // Every input's rows in one parallel pass, the gathered ones' in another, then every input's
  // tiles in a third.
  row_starts_.assign(1, 0);
  gather_starts_.assign(1, 0);
  tile_starts_.assign(1, 0);
  int64_t encoded_values = 0, gathered_bytes = 0;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const Input& in = inputs_[i];
    const bool gathered = in.x_rows != nullptr;
    const bool encoded = in.format != ActFormat::kF32 && !gathered;
    row_starts_.push_back(row_starts_.back() + (encoded ? in.n_tokens : 0));
    gather_starts_.push_back(gather_starts_.back() + (gathered ? in.n_tokens : 0));
    tile_starts_.push_back(tile_starts_.back() +
                           (prepared_[i].tiles != nullptr ? TileCount(in.n_tokens) : 0));
    if (encoded) encoded_values += in.n_tokens * in.n_cols;
    if (gathered) gathered_bytes += in.n_tokens * ActRowBytes(in.format, in.n_cols);
  }
  if (row_starts_.back() > 0) {
    const int64_t grain = std::max<int64_t>(
        1, kMinTaskMacs * row_starts_.back() / std::max<int64_t>(1, encoded_values));
    ForEachItemRange(pool, row_starts_, grain, [&](size_t i, int64_t t0, int64_t t1) {
      EncodeRows(inputs_[i], prepared_[i], act_buffers_[i].data(), t0, t1);
    });
  }
  if (gather_starts_.back() > 0) {
    const int64_t grain = std::max<int64_t>(
        1, kMinTaskMacs * gather_starts_.back() / std::max<int64_t>(1, gathered_bytes));
    ForEachItemRange(pool, gather_starts_, grain, [&](size_t i, int64_t t0, int64_t t1) {
      GatherRows(inputs_[i], prepared_[inputs_[i].source], act_buffers_[i].data(), t0, t1);
    });
  }
  if (tile_starts_.back() > 0) {
    ForEachItemRange(pool, tile_starts_, 1, [&](size_t i, int64_t i0, int64_t i1) {
      EncodeTiles(inputs_[i], prepared_[i], tile_buffers_[i].data(), i0, i1);
    });
  }
  return true;
}

}  // namespace ds::kernels::internal
