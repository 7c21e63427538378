// MatVec / MatMul drivers: prepare the activations once per call, then split weight rows across
// the pool. Each task walks its rows in blocks small enough to stay in cache and, for every tile
// of up to kMaxTileTokens tokens, runs the tile kernel over the block, so a weight row is read
// from memory once per call and reused for every token tile from L2.

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

}  // namespace

void MatMul(const MatrixView& w, const float* x, int64_t n_tokens, float* y, ThreadPool* pool) {
  DS_CHECK(w.n_cols % tensor::Traits(w.type).block_elems == 0);
  DS_CHECK(w.row_bytes >= tensor::RowBytes(w.type, w.n_cols));
  if (n_tokens <= 0 || w.n_rows <= 0) return;
  const internal::TileDotFn tile_dot = TileDotFor(internal::Table(), w.type);
  const ActFormat format = internal::ActFormatFor(w.type);
  const int64_t act_stride = internal::ActRowBytes(format, w.n_cols);

  // Quantised activations live in a per-calling-thread buffer reused across calls.
  thread_local std::vector<uint8_t> act_buffer;
  const uint8_t* act = reinterpret_cast<const uint8_t*>(x);
  if (format != ActFormat::kF32) {
    act_buffer.resize(static_cast<size_t>(act_stride * n_tokens));
    uint8_t* dst = act_buffer.data();
    internal::ParallelRanges(
        pool, n_tokens, std::max<int64_t>(1, kMinTaskMacs / w.n_cols), [&](int64_t t0, int64_t t1) {
          for (int64_t t = t0; t < t1; ++t) {
            internal::QuantizeActRow(format, x + t * w.n_cols, w.n_cols, dst + t * act_stride);
          }
        });
    act = dst;
  }

  const int64_t row_block = std::clamp<int64_t>(kRowBlockBytes / std::max<int64_t>(1, w.row_bytes),
                                                1, kMaxRowBlock);
  const int64_t grain = std::max<int64_t>(1, kMinTaskMacs / (w.n_cols * n_tokens));
  internal::ParallelRanges(pool, w.n_rows, grain, [&](int64_t r0, int64_t r1) {
    float tile_out[kMaxRowBlock * internal::kMaxTileTokens];
    for (int64_t rb = r0; rb < r1; rb += row_block) {
      const int64_t n_rows = std::min(r1 - rb, row_block);
      for (int64_t t0 = 0; t0 < n_tokens; t0 += internal::kMaxTileTokens) {
        const int nt = static_cast<int>(std::min<int64_t>(internal::kMaxTileTokens, n_tokens - t0));
        tile_dot(w.row(rb), w.row_bytes, n_rows, w.n_cols, act + t0 * act_stride, act_stride, nt,
                 tile_out);
        for (int64_t r = 0; r < n_rows; ++r) {
          for (int t = 0; t < nt; ++t) y[(t0 + t) * w.n_rows + rb + r] = tile_out[r * nt + t];
        }
      }
    }
  });
}

void MatVec(const MatrixView& w, const float* x, float* y, ThreadPool* pool) {
  MatMul(w, x, 1, y, pool);
}

}  // namespace ds::kernels
