// Public entry points other than MatVec/MatMul (matmul.cc): thin wrappers over the selected
// kernel table. Rope computes its angles here, once per call, and rotates with the table; TopK's
// final ordering of its candidates is shared by every table.

#include "kernels/kernels.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <numeric>
#include <optional>
#include <vector>

#include "base/check.h"
#include "base/function_ref.h"
#include "kernels/denormals.h"
#include "kernels/dispatch.h"
#include "kernels/parallel.h"
#include "tensor/blocks.h"
#include "tensor/quant.h"

namespace ds::kernels {

void RmsNorm(const float* x, const float* weight, int64_t n, float eps, float* y) {
  DS_CHECK(n > 0);
  internal::Table().rms_norm(x, weight, n, eps, y);
}

void Rope(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, int64_t pos, float freq_base,
          RopeStyle style) {
  DS_CHECK(n_rot % 2 == 0 && n_rot <= head_dim);
  const int64_t half = n_rot / 2;
  // Angles in double: pos * freq reaches 1e5 and more, where a float angle is off by ~1e-2 rad.
  // Kept for the next call: a token's q and k heads, and every attention layer of a decode step,
  // rotate at the same position (each computation is pow, cos and sin in double per pair).
  struct Key {
    int64_t pos, n_rot;
    float freq_base;
    RopeStyle style;
    bool operator==(const Key&) const = default;
  };
  thread_local std::vector<float> factors;
  thread_local std::optional<Key> factors_key;
  const Key key{pos, n_rot, freq_base, style};
  if (factors_key == key) {
    internal::Table().rope(x, n_heads, head_dim, n_rot, style, factors.data());
    return;
  }
  factors_key = key;
  factors.resize(static_cast<size_t>(2 * n_rot));
  for (int64_t i = 0; i < half; ++i) {
    const double theta =
        static_cast<double>(pos) * std::pow(static_cast<double>(freq_base), -2.0 * i / n_rot);
    const float c = static_cast<float>(std::cos(theta)), s = static_cast<float>(std::sin(theta));
    if (style == RopeStyle::kNeox) {
      factors[i] = c;
      factors[half + i] = s;
    } else {
      factors[2 * i] = factors[2 * i + 1] = c;
      factors[n_rot + 2 * i] = -s;
      factors[n_rot + 2 * i + 1] = s;
    }
  }
  internal::Table().rope(x, n_heads, head_dim, n_rot, style, factors.data());
}

namespace {

// Writes rows x[n_tokens][shape.n_kv_heads * shape.head_dim] as positions [first_pos, first_pos +
// n_tokens) of a K or V cache of `shape`: each row quantised to shape.dtype (kF32, kQ8_0 or, for
// V, kQ4_0) alone and handed to put(row, position, 1, shape, cache), which lays it out.
template <class Shape, class Put>
void StoreRows(const float* x, int64_t first_pos, int64_t n_tokens, const Shape& shape, Put put,
               uint8_t* cache) {
  DS_CHECK(shape.dtype == tensor::DType::kF32 || shape.dtype == tensor::DType::kQ8_0 ||
           shape.dtype == tensor::DType::kQ4_0);
  const int64_t row_floats = shape.n_kv_heads * shape.head_dim;
  thread_local std::vector<uint8_t> row;
  row.resize(static_cast<size_t>(shape.row_bytes()));
  for (int64_t t = 0; t < n_tokens; ++t) {
    tensor::QuantizeRow(shape.dtype, x + t * row_floats, row.data(), row_floats);
    put(row.data(), first_pos + t, 1, shape, cache);
  }
}

}  // namespace

void StoreKeyRows(const float* k, int64_t first_pos, int64_t n_tokens,
                  const tensor::KeyShape& shape, uint8_t* cache) {
  StoreRows(k, first_pos, n_tokens, shape, tensor::PutKeyRows, cache);
}

void StoreValueRows(const float* v, int64_t first_pos, int64_t n_tokens,
                    const tensor::ValueShape& shape, uint8_t* cache) {
  StoreRows(v, first_pos, n_tokens, shape, tensor::PutValueRows, cache);
}

tensor::KeyShape KeyShapeOf(const AttentionArgs& args) {
  return {args.k_dtype, args.n_kv_heads, args.head_dim, args.k_tiles_wanted};
}

bool PrefersTiledKeys() { return internal::Table().attend_rounds_q8_queries; }

tensor::ValueShape ValueShapeOf(const AttentionArgs& args) {
  return {args.v_dtype, args.n_kv_heads, args.head_dim, args.v_spans_wanted};
}

bool PrefersValueSpans() { return internal::Table().attend_encodes_q8_value_weights; }

void Attention(const AttentionArgs& args, ThreadPool* pool) {
  DS_CHECK(args.n_kv_heads > 0 && args.n_heads % args.n_kv_heads == 0);
  DS_CHECK(args.head_dim > 0 && args.first_pos >= 0);
  DS_CHECK(args.k_dtype == tensor::DType::kF32 ||
           (args.k_dtype == tensor::DType::kQ8_0 && args.head_dim % tensor::kQK == 0));
  DS_CHECK(args.v_dtype == tensor::DType::kF32 ||
           ((args.v_dtype == tensor::DType::kQ8_0 || args.v_dtype == tensor::DType::kQ4_0) &&
            args.head_dim % tensor::kQK == 0));
  const internal::AttendFn attend = internal::Table().attend;
  const internal::AttendMergeFn merge = internal::Table().attend_merge;
  const int64_t group = args.n_heads / args.n_kv_heads;
  const int64_t n_positions = args.first_pos + args.n_tokens;
  const int64_t n_chunks = (n_positions + internal::kAttentionChunkPositions - 1) /
                           internal::kAttentionChunkPositions;
  // An item is a tile of tokens times the query heads of one KV head, which share every K and V
  // row it reads (in a long decode step, below, times every head). When a cache of one chunk
  // leaves fewer items than threads (decode with few KV heads), a group is split into smaller
  // sets of heads; a longer cache spreads a decode step over its chunks instead, without reading
  // each row once per set.
  const int64_t threads = pool != nullptr ? pool->num_threads() : 1;
  int64_t heads_per_item = group;
  while (n_chunks == 1 && heads_per_item > 1 && heads_per_item % 2 == 0 &&
         args.n_kv_heads * (group / heads_per_item) < threads) {
    heads_per_item /= 2;
  }
  // A decode step over a cache of chunks enough for every thread: an item takes all the heads,
  // so that a thread reads a chunk's rows (which hold every KV head) as one stream. On the bench
  // model's shape (Zen 5, kernels_bench medians of interleaved runs, two threads) a step at
  // depth 4096 took 129 us instead of 140, at 32k 1051 instead of 1102.
  if (args.n_tokens == 1 && n_chunks >= 2 * threads) heads_per_item = args.n_heads;
  const int64_t tile = std::max<int64_t>(1, internal::kAttentionQueryTile / heads_per_item);
  const int64_t n_tiles = (args.n_tokens + tile - 1) / tile;
  const int64_t head_sets = args.n_heads / heads_per_item;
  const int64_t n_items = n_tiles * head_sets;
  // Partial states of one item's queries for one chunk.
  const int64_t chunk_stride =
      std::min(tile, args.n_tokens) * heads_per_item *
      (args.head_dim + internal::kPartialStateExtraFloats);
  const auto item_range = [&](int64_t item, auto&& fn) {
    const int64_t t0 = (item / head_sets) * tile;
    const int64_t h0 = (item % head_sets) * heads_per_item;
    fn(t0, std::min(t0 + tile, args.n_tokens), h0, h0 + heads_per_item);
  };
  // Work of one item and chunk: about its queries * positions * head_dim * 2 multiply-adds.
  const int64_t task_macs = std::max<int64_t>(
      1, std::min(tile, args.n_tokens) * heads_per_item *
             std::min(n_positions, internal::kAttentionChunkPositions) *
             args.head_dim * 2);
  const int64_t grain = std::max<int64_t>(1, (1 << 15) / task_macs);
  // Per thread and kept between calls: attention runs for every layer of every decode step.
  const auto thread_scratch = [&] {
    thread_local std::vector<float> scratch;
    scratch.resize(static_cast<size_t>(internal::AttendScratchFloats(
        args.head_dim, std::min(tile, args.n_tokens) * heads_per_item)));
    return scratch.data();
  };
  // A chunk's rows hold every KV head: the head sets of a tile take a chunk one after another,
  // while it sits in L2, before the next chunk (one thread at depth 32k: 0.80 of the time of
  // taking each head set through every chunk).
  if (n_chunks > 1 && n_tiles == 1) {
    // One tile of tokens (a decode step): the chunks run as tasks of their own, and then each
    // item's chunks are merged.
    thread_local std::vector<float> partials;
    partials.resize(static_cast<size_t>(n_items * n_chunks * chunk_stride));
    float* item_partials = partials.data();
    internal::ParallelRanges(pool, n_chunks * n_items, grain, [&](int64_t k0, int64_t k1) {
      const internal::FlushDenormalsScope flush_denormals;
      float* scratch = thread_scratch();
      for (int64_t k = k0; k < k1; ++k) {
        const int64_t chunk = k / n_items, item = k % n_items;
        item_range(item, [&](int64_t t0, int64_t t1, int64_t h0, int64_t h1) {
          attend(args, t0, t1, h0, h1, chunk,
                 item_partials + (item * n_chunks + chunk) * chunk_stride, scratch);
        });
      }
    });
    internal::ParallelRanges(pool, n_items, 1, [&](int64_t i0, int64_t i1) {
      for (int64_t item = i0; item < i1; ++item) {
        item_range(item, [&](int64_t t0, int64_t t1, int64_t h0, int64_t h1) {
          merge(args, t0, t1, h0, h1, n_chunks, chunk_stride,
                item_partials + item * n_chunks * chunk_stride);
        });
      }
    });
    return;
  }
  // Many tiles (a prompt): a task is a tile with all its head sets, chunk after chunk; a cache of
  // one chunk has nothing to share between sets, and a task is an item.
  const int64_t sets_per_task = n_chunks > 1 ? head_sets : 1;
  internal::ParallelRanges(pool, n_items / sets_per_task,
                           std::max<int64_t>(1, grain / (n_chunks * sets_per_task)),
                           [&](int64_t task0, int64_t task1) {
    const internal::FlushDenormalsScope flush_denormals;
    float* scratch = thread_scratch();
    thread_local std::vector<float> task_partials;  // [head set][chunk][chunk_stride]
    task_partials.resize(static_cast<size_t>(sets_per_task * n_chunks * chunk_stride));
    for (int64_t item = task0 * sets_per_task; item < task1 * sets_per_task;
         item += sets_per_task) {
      for (int64_t chunk = 0; chunk < n_chunks; ++chunk) {
        for (int64_t set = 0; set < sets_per_task; ++set) {
          item_range(item + set, [&](int64_t t0, int64_t t1, int64_t h0, int64_t h1) {
            attend(args, t0, t1, h0, h1, chunk,
                   task_partials.data() + (set * n_chunks + chunk) * chunk_stride, scratch);
          });
        }
      }
      for (int64_t set = 0; set < sets_per_task; ++set) {
        item_range(item + set, [&](int64_t t0, int64_t t1, int64_t h0, int64_t h1) {
          merge(args, t0, t1, h0, h1, n_chunks, chunk_stride,
                task_partials.data() + set * n_chunks * chunk_stride);
        });
      }
    }
  });
}

void SwiGlu(const float* gate, const float* up, int64_t n, float* out) {
  internal::Table().swiglu(gate, up, n, out);
}

void Silu(float* x, int64_t n) { internal::Table().silu(x, n); }

void SigmoidGate(float* x, const float* gate, int64_t n) {
  internal::Table().sigmoid_gate(x, gate, n);
}

void Softmax(float* x, int64_t n) {
  DS_CHECK(n > 0);
  internal::Table().softmax(x, n);
}

// With T the k-th largest of the block maxima, at least k values are >= T (those maxima), so every
// one of the top k is too; only the values >= T (a few times k on logits) are then ordered. The
// vectors and algorithms live here, in baseline code, not in the ISA tables' translation units.
void TopK(const float* x, int64_t n, int64_t k, int32_t* indices) {
  DS_CHECK(k >= 0 && k <= n);
  if (k == 0) return;
  const internal::KernelTable& table = internal::Table();
  thread_local std::vector<int32_t> candidates;
  thread_local std::vector<float> maxima;
  const int64_t n_blocks = n / internal::kTopKBlock;
  candidates.resize(static_cast<size_t>(n));
  if (k > n_blocks) {
    std::iota(candidates.begin(), candidates.end(), 0);
  } else {
    maxima.resize(static_cast<size_t>(n_blocks));
    table.block_maxima(x, n_blocks, maxima.data());
    std::nth_element(maxima.begin(), maxima.begin() + (k - 1), maxima.end(),
                     std::greater<float>());
    candidates.resize(
        static_cast<size_t>(table.indices_at_least(x, n, maxima[k - 1], candidates.data())));
  }
  std::partial_sort(candidates.begin(), candidates.begin() + k, candidates.end(),
                    [x](int32_t a, int32_t b) { return x[a] > x[b] || (x[a] == x[b] && a < b); });
  std::copy(candidates.begin(), candidates.begin() + k, indices);
}

float Dot(const float* a, const float* b, int64_t n) { return internal::Table().dot(a, b, n); }

void Axpy(float a, const float* x, int64_t n, float* y) { internal::Table().axpy(a, x, n, y); }

namespace {

// The best of three passes of `burn` on every thread of the pool, each thread `rounds` rounds of
// ops_per_round operations, in billions of operations a second.
double MeasurePeak(ThreadPool* pool, FunctionRef<double(int64_t)> burn,
                   double ops_per_round) {
  constexpr int64_t kRounds = 10'000'000;  // about 20 ms per thread on a current core
  constexpr int kPasses = 3;
  const int threads = pool != nullptr ? pool->num_threads() : 1;
  std::atomic<double> sink{0.0};
  double best = 0;
  for (int pass = 0; pass < kPasses; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    internal::ParallelRanges(pool, threads, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) sink.store(sink.load() + burn(kRounds));
    });
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, threads * kRounds * ops_per_round / seconds / 1e9);
  }
  return best;
}

}  // namespace

double MeasureFmaPeakGflops(ThreadPool* pool) {
  const internal::KernelTable& table = internal::Table();
  return MeasurePeak(pool, table.fma_burn,
                     2.0 * internal::kFmaBurnChains * static_cast<double>(table.fma_lanes));
}

double MeasureInt8DotPeakGops(ThreadPool* pool) {
  const internal::KernelTable& table = internal::Table();
  if (table.dot_burn == nullptr) return 0;
  return MeasurePeak(
      pool, [&](int64_t rounds) { return static_cast<double>(table.dot_burn(rounds)); },
      2.0 * table.dot_burn_macs);
}

namespace internal {

namespace {

KvHeadRows HeadOf(const AttentionArgs& args, tensor::DType dtype, const void* cache,
                  int64_t kv_offset) {
  const int64_t row_elements = args.n_kv_heads * args.head_dim;
  return {static_cast<const uint8_t*>(cache) + tensor::RowBytes(dtype, kv_offset),
          tensor::RowBytes(dtype, row_elements)};
}

}  // namespace

KvHeadRows KeyHeadOf(const AttentionArgs& args, int64_t kv_offset) {
  return HeadOf(args, args.k_dtype, args.k_cache, kv_offset);
}

KvHeadRows ValueHeadOf(const AttentionArgs& args, int64_t kv_offset) {
  return HeadOf(args, args.v_dtype, args.v_cache, kv_offset);
}

void* KernelScratch(int64_t bytes) {
  struct alignas(64) Line {
    unsigned char bytes[64];
  };
  thread_local std::vector<Line> lines;
  const auto n = static_cast<size_t>((bytes + 63) / 64);
  if (lines.size() < n) lines.resize(n);
  return lines.data();
}

}  // namespace internal

}  // namespace ds::kernels
