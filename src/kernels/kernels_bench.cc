// MatVec throughput per weight dtype on a 4096 x 4096 matrix, reported as weight bytes streamed per
// second (GB/s), from the caches (MatVec4096: one matrix, which a last-level cache may hold) and
// from memory (MatVecFromMemory: copies in turn, as a decode step streams its weights;
// ExpertsFromMemory: a MoE step's short expert matrices at scattered addresses), MatMul
// (prefill) throughput on the bench model's shapes, reported as multiply-adds per second
// (items/s), and one decode step of attention over a deep KV cache,
// reported as KV bytes read per second, next to a bare read of the same rows (KvRead, the step's
// memory floor). Not part of ctest. Flags beyond Google Benchmark's own:
// the environment variable DS_KERNELS_ISA picks the path; --threads=N (default 2) sizes the pool.
//   ./build/src/kernels/kernels_bench --threads=2

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "base/large_buffer.h"
#include "kernels/kernel_table.h"
#include "kernels/kernels.h"
#include "tensor/dtype.h"
#include "tensor/quant.h"

namespace ds::kernels {
namespace {

constexpr int64_t kRows = 4096;
constexpr int64_t kCols = 4096;
int g_threads = 2;

std::vector<uint8_t> RandomMatrix(tensor::DType type, int64_t n_rows, int64_t n_cols) {
  std::mt19937 rng(42);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> row(n_cols);
  const int64_t row_bytes = tensor::RowBytes(type, n_cols);
  std::vector<uint8_t> data(static_cast<size_t>(row_bytes * n_rows));
  for (int64_t r = 0; r < n_rows; ++r) {
    for (float& v : row) v = dist(rng) * 0.02f;
    tensor::QuantizeRow(type, row.data(), data.data() + r * row_bytes, n_cols);
  }
  return data;
}

std::vector<float> RandomActivations(int64_t n) {
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(n);
  for (float& v : x) v = dist(rng);
  return x;
}

std::string Label() { return std::string(ActiveIsa()) + " threads=" + std::to_string(g_threads); }

// Matrices whose rows the active table reads faster interleaved (CanInterleaveRows) are
// benchmarked both ways, the interleaved ones named ".../interleaved".
MatrixView Laid(MatrixView w, std::vector<uint8_t>& data, bool interleaved) {
  return interleaved ? InterleaveRows(w, data.data()) : w;
}

// Copies of a matrix that iterations take in turn: at least 256 MiB in all from memory, so that
// no cache holds the next one (the attention benchmarks' reasoning, below), else one.
constexpr int64_t kFromMemoryBytes = int64_t{256} << 20;

// Copies of a matrix's bytes back to back, enough to span at least min_bytes (at least one).
struct MatrixCopies {
  std::vector<uint8_t, LargeBufferAllocator<uint8_t>> bytes;
  int64_t count = 0;
  int64_t matrix_bytes = 0;
  const uint8_t* Copy(int64_t i) const { return bytes.data() + i * matrix_bytes; }
};

MatrixCopies CopiesSpanning(const std::vector<uint8_t>& matrix, int64_t min_bytes) {
  MatrixCopies copies;
  copies.matrix_bytes = static_cast<int64_t>(matrix.size());
  copies.count = std::max<int64_t>(1, (min_bytes + copies.matrix_bytes - 1) / copies.matrix_bytes);
  copies.bytes.resize(static_cast<size_t>(copies.count * copies.matrix_bytes));
  for (int64_t c = 0; c < copies.count; ++c) {
    std::copy(matrix.begin(), matrix.end(), copies.bytes.begin() + c * copies.matrix_bytes);
  }
  return copies;
}

void BM_MatVec(benchmark::State& state, tensor::DType type, bool interleaved, bool from_memory) {
  std::vector<uint8_t> data = RandomMatrix(type, kRows, kCols);
  const int64_t row_bytes = tensor::RowBytes(type, kCols);
  const MatrixView w = Laid({data.data(), type, kRows, kCols, row_bytes}, data, interleaved);
  const MatrixCopies copies = CopiesSpanning(data, from_memory ? kFromMemoryBytes : 0);
  std::vector<float> x = RandomActivations(kCols), y(kRows);
  ThreadPool pool(g_threads);
  int64_t copy = 0;
  for (auto _ : state) {
    MatrixView view = w;
    view.data = copies.Copy(copy);
    copy = (copy + 1) % copies.count;
    MatVec(view, x.data(), y.data(), &pool);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(state.iterations() * copies.matrix_bytes);
  state.SetLabel(Label());
}

// Arguments: rows, columns, tokens.
void BM_MatMul(benchmark::State& state, tensor::DType type, bool interleaved) {
  const int64_t n_rows = state.range(0), n_cols = state.range(1), n_tokens = state.range(2);
  std::vector<uint8_t> data = RandomMatrix(type, n_rows, n_cols);
  const MatrixView w = Laid({data.data(), type, n_rows, n_cols, tensor::RowBytes(type, n_cols)},
                            data, interleaved);
  std::vector<float> x = RandomActivations(n_cols * n_tokens), y(n_rows * n_tokens);
  ThreadPool pool(g_threads);
  for (auto _ : state) {
    MatMul(w, x.data(), n_tokens, y.data(), &pool);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * n_rows * n_cols * n_tokens);
  state.SetLabel(Label());
}

// A MoE decode step's routed experts for one token, as one MatMuls call: the gate and up
// matrices (256 x 1024 each, the bench model's) of four experts, taken in a shuffled order from
// copies spanning kFromMemoryBytes, so that each is read from memory at a scattered
// address, as a step's chosen experts are. Short matrices in one call, where MatVecFromMemory
// reads one long one.
void BM_ExpertsFromMemory(benchmark::State& state, tensor::DType type, bool interleaved) {
  constexpr int64_t kExpertRows = 256, kExpertCols = 1024, kChosen = 4;
  std::vector<uint8_t> data = RandomMatrix(type, kExpertRows, kExpertCols);
  const int64_t row_bytes = tensor::RowBytes(type, kExpertCols);
  const MatrixView w =
      Laid({data.data(), type, kExpertRows, kExpertCols, row_bytes}, data, interleaved);
  const MatrixCopies copies = CopiesSpanning(data, kFromMemoryBytes);
  std::vector<float> x = RandomActivations(kExpertCols), y(2 * kChosen * kExpertRows);
  ThreadPool pool(g_threads);
  std::vector<int64_t> order(static_cast<size_t>(copies.count));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(11));
  size_t next = 0;
  std::vector<MatMulJob> jobs(2 * kChosen);
  for (auto _ : state) {
    for (size_t j = 0; j < jobs.size(); ++j) {
      MatrixView view = w;
      view.data = copies.Copy(order[next]);
      next = (next + 1) % order.size();
      jobs[j] = {view, x.data(), 1, y.data() + j * kExpertRows};
    }
    MatMuls(jobs, &pool);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(jobs.size()) *
                          copies.matrix_bytes);
  state.SetLabel(Label());
}

// The bench model's attention shape.
constexpr int64_t kHeads = 8, kKvHeads = 2, kHeadDim = 128;

// The K and V rows of n_pos positions for each of n_layers layers, K of layer l at
// caches[2 l], V at caches[2 l + 1]. Iterations take layers in turn, at least the bench model's
// six attention layers and at least 256 MiB in all, so that a deep cache is read from memory as
// in a decode step (where the weights pass through the caches between attention layers) and not
// from a last-level cache that six layers' rows could fit in (105 MiB of L3 on one machine of
// ours); or, with CacheSpread::kOneLayer, one layer alone.
struct LayerCaches {
  // In buffers like a sequence's (see base/large_buffer.h).
  std::vector<std::vector<uint8_t, LargeBufferAllocator<uint8_t>>> caches;
  int64_t n_layers;
  int64_t key_bytes, value_bytes;  // of one layer (tiles, spans)
};

// How a benchmark's caches hold K and V, named by their dtypes ("q8_0", or "q8_0-q4_0" where V's
// differs).
struct CacheDtypes {
  tensor::DType key, value;
  std::string Name() const {
    const std::string key_name(tensor::DTypeName(key));
    return key == value ? key_name : key_name + "-" + std::string(tensor::DTypeName(value));
  }
};

// Where: one layer alone, read again and again, so that a shallow cache stays in L2 (what a
// step's instructions cost, with no wait for memory).
enum class CacheSpread { kFromMemory, kOneLayer };

LayerCaches MakeLayerCaches(CacheDtypes dtypes, int64_t n_pos,
                            CacheSpread spread = CacheSpread::kFromMemory) {
  const bool one_layer = spread == CacheSpread::kOneLayer;
  const int64_t min_layers = one_layer ? 1 : 6;
  const int64_t min_cache_bytes = one_layer ? 0 : int64_t{256} << 20;
  const int64_t row_floats = kKvHeads * kHeadDim;
  const tensor::KeyShape key_shape{dtypes.key, kKvHeads, kHeadDim, PrefersTiledKeys()};
  const tensor::ValueShape value_shape{dtypes.value, kKvHeads, kHeadDim, PrefersValueSpans()};
  const std::vector<float> rows = RandomActivations(n_pos * row_floats);
  std::vector<uint8_t> keys(static_cast<size_t>(key_shape.CacheBytes(n_pos)));
  std::vector<uint8_t> values(static_cast<size_t>(value_shape.CacheBytes(n_pos)));
  StoreKeyRows(rows.data(), 0, n_pos, key_shape, keys.data());
  StoreValueRows(rows.data(), 0, n_pos, value_shape, values.data());
  const int64_t layer_bytes = std::ssize(keys) + std::ssize(values);
  const int64_t n_layers =
      std::max(min_layers, min_cache_bytes / std::max<int64_t>(1, layer_bytes));
  LayerCaches out{{}, n_layers, std::ssize(keys), std::ssize(values)};
  for (int64_t l = 0; l < n_layers; ++l) {
    out.caches.emplace_back(keys.begin(), keys.end());
    out.caches.emplace_back(values.begin(), values.end());
  }
  return out;
}

// One attention layer of the bench model for n_tokens new tokens (1: a decode step; more: a chunk
// of a prompt) after state.range(0) cached positions, over caches of `dtypes`.
void BM_Attention(benchmark::State& state, CacheDtypes dtypes, int64_t n_tokens,
                  CacheSpread spread) {
  const int64_t depth = state.range(0);
  const LayerCaches kv = MakeLayerCaches(dtypes, depth + n_tokens, spread);
  const std::vector<float> q = RandomActivations(n_tokens * kHeads * kHeadDim);
  std::vector<float> out(n_tokens * kHeads * kHeadDim);
  AttentionArgs args;
  args.q = q.data();
  args.k_dtype = dtypes.key;
  args.v_dtype = dtypes.value;
  args.n_tokens = n_tokens;
  args.n_heads = kHeads;
  args.n_kv_heads = kKvHeads;
  args.head_dim = kHeadDim;
  args.first_pos = depth;
  args.k_tiles_wanted = PrefersTiledKeys();
  args.v_spans_wanted = PrefersValueSpans();
  args.scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
  args.out = out.data();
  ThreadPool pool(g_threads);
  int64_t layer = 0;
  for (auto _ : state) {
    args.k_cache = kv.caches[2 * layer].data();
    args.v_cache = kv.caches[2 * layer + 1].data();
    layer = (layer + 1) % kv.n_layers;
    Attention(args, &pool);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * (kv.key_bytes + kv.value_bytes));
  state.SetLabel(Label());
}

// The memory floor of AttentionDecode: the same layers' K and V rows read by the same threads in
// chunks of the same positions, one load per cache line and no arithmetic.
constexpr int64_t kChunkPositions = internal::kAttentionChunkPositions;
void BM_KvRead(benchmark::State& state, CacheDtypes dtypes) {
  const int64_t n_pos = state.range(0) + 1;
  const LayerCaches kv = MakeLayerCaches(dtypes, n_pos);
  const int64_t key_chunk_bytes =
      kChunkPositions * tensor::RowBytes(dtypes.key, kKvHeads * kHeadDim);
  const int64_t value_chunk_bytes =
      kChunkPositions * tensor::RowBytes(dtypes.value, kKvHeads * kHeadDim);
  const int64_t n_chunks = (n_pos + kChunkPositions - 1) / kChunkPositions;
  ThreadPool pool(g_threads);
  int64_t layer = 0;
  for (auto _ : state) {
    const uint8_t* keys = kv.caches[2 * layer].data();
    const uint8_t* values = kv.caches[2 * layer + 1].data();
    layer = (layer + 1) % kv.n_layers;
    pool.ParallelFor(n_chunks, 1, [&](int64_t c0, int64_t c1) {
      uint64_t sum = 0;
      // K's and V's lines side by side: a V line for every K line where they are as many, each
      // V line read once or twice (the second time from L1) where V is smaller.
      const int64_t key_begin = c0 * key_chunk_bytes;
      const int64_t key_end = std::min(c1 * key_chunk_bytes, kv.key_bytes);
      const int64_t value_begin = c0 * value_chunk_bytes;
      const int64_t value_lines =
          (std::min(c1 * value_chunk_bytes, kv.value_bytes) - value_begin + 63) / 64;
      const int64_t key_lines = (key_end - key_begin + 63) / 64;
      for (int64_t line = 0; line < key_lines; ++line) {
        uint64_t k, v;
        std::memcpy(&k, keys + key_begin + line * 64, sizeof k);
        std::memcpy(&v, values + value_begin + line * value_lines / key_lines * 64, sizeof v);
        sum += k ^ v;
      }
      benchmark::DoNotOptimize(sum);
    });
  }
  state.SetBytesProcessed(state.iterations() * (kv.key_bytes + kv.value_bytes));
  state.SetLabel(Label());
}

// The layouts to benchmark a dtype in: as the file has it, and interleaved where it can be.
std::vector<bool> Layouts(tensor::DType type) {
  const MatrixView probe{nullptr, type, 256, 256, tensor::RowBytes(type, 256)};
  return CanInterleaveRows(probe) ? std::vector<bool>{false, true} : std::vector<bool>{false};
}

std::string LayoutSuffix(bool interleaved) { return interleaved ? "/interleaved" : ""; }

// Calls add(name, type, interleaved) for each type in each of its layouts, named
// family/<dtype>[/interleaved]; add registers the benchmark and returns it.
template <class Add>
void RegisterLayouts(const char* family, std::initializer_list<tensor::DType> types, Add add) {
  for (tensor::DType type : types) {
    for (bool interleaved : Layouts(type)) {
      const std::string name = std::string(family) + "/" + std::string(tensor::DTypeName(type)) +
                               LayoutSuffix(interleaved);
      add(name.c_str(), type, interleaved)->UseRealTime();
    }
  }
}

void RegisterAll() {
  using tensor::DType;
  RegisterLayouts("MatVec4096",
                  {DType::kF32, DType::kF16, DType::kBF16, DType::kQ8_0, DType::kQ4_0, DType::kQ4_1,
                   DType::kQ5_0, DType::kQ5_1, DType::kQ2_K, DType::kQ3_K, DType::kQ4_K,
                   DType::kQ5_K, DType::kQ6_K},
                  [](const char* name, DType type, bool interleaved) {
                    return benchmark::RegisterBenchmark(name, BM_MatVec, type, interleaved, false)
                        ->Unit(benchmark::kMicrosecond);
                  });
  RegisterLayouts("MatVecFromMemory",
                  {DType::kF16, DType::kBF16, DType::kQ8_0, DType::kQ4_K, DType::kQ5_K,
                   DType::kQ6_K},
                  [](const char* name, DType type, bool interleaved) {
                    return benchmark::RegisterBenchmark(name, BM_MatVec, type, interleaved, true)
                        ->Unit(benchmark::kMicrosecond);
                  });
  RegisterLayouts("ExpertsFromMemory", {DType::kQ8_0, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K},
                  [](const char* name, DType type, bool interleaved) {
                    return benchmark::RegisterBenchmark(name, BM_ExpertsFromMemory, type,
                                                        interleaved)
                        ->Unit(benchmark::kMicrosecond);
                  });
  // The bench model's projections (1024 -> 2048, 1024 -> 256) and an expert's down projection
  // (256 -> 1024) over a 512-token prefill chunk and a 64-token expert group, an expert's
  // matrices for one token (decode, from cache), and a 1024 x 1024 matrix for one token, whose
  // product from L2 outweighs a call's fixed costs (encoding the token, the pool's hand-off).
  RegisterLayouts("MatMul",
                  {DType::kF16, DType::kBF16, DType::kQ8_0, DType::kQ4_0, DType::kQ4_K,
                   DType::kQ5_K, DType::kQ6_K},
                  [](const char* name, DType type, bool interleaved) {
                    return benchmark::RegisterBenchmark(name, BM_MatMul, type, interleaved)
                        ->Args({2048, 1024, 512})
                        ->Args({256, 1024, 64})
                        ->Args({1024, 256, 64})
                        ->Args({256, 1024, 1})
                        ->Args({1024, 256, 1})
                        ->Args({1024, 1024, 1})
                        ->Unit(benchmark::kMillisecond);
                  });
  for (CacheDtypes kv_dtype : {CacheDtypes{DType::kF32, DType::kF32},
                               CacheDtypes{DType::kQ8_0, DType::kQ8_0},
                               CacheDtypes{DType::kQ8_0, DType::kQ4_0}}) {
    const std::string dtype = kv_dtype.Name();
    // 128: a shallow cache, whose first block no earlier block streams.
    benchmark::RegisterBenchmark(("AttentionDecode/" + dtype).c_str(), BM_Attention, kv_dtype, 1,
                                 CacheSpread::kFromMemory)
        ->Arg(128)
        ->Arg(4096)
        ->Arg(32768)
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
    // The same step with one layer's K and V in L2: its instructions alone.
    benchmark::RegisterBenchmark(("AttentionDecodeInL2/" + dtype).c_str(), BM_Attention, kv_dtype,
                                 1, CacheSpread::kOneLayer)
        ->Arg(1024)
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("KvRead/" + dtype).c_str(), BM_KvRead, kv_dtype)
        ->Arg(32768)
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
    // 64 prompt tokens at a depth: the tiles of a prefill chunk.
    benchmark::RegisterBenchmark(("AttentionPrefill64/" + dtype).c_str(), BM_Attention, kv_dtype,
                                 64, CacheSpread::kFromMemory)
        ->Arg(4096)
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
  }
}

}  // namespace
}  // namespace ds::kernels

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0)
      ds::kernels::g_threads = std::atoi(argv[i] + 10);
  }
  ds::kernels::RegisterAll();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
