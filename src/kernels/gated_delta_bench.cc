// Throughput of the gated delta rule at Qwen3.5-like head counts (Hk = 8, Hv = 16,
// dk = dv = 64). items_per_second is tokens per second of wall time for one layer.
#include <benchmark/benchmark.h>

#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "kernels/gated_delta.h"

namespace ds::kernels {
namespace {

constexpr int64_t kNumKHeads = 8;
constexpr int64_t kNumVHeads = 16;
constexpr int64_t kHeadDim = 64;

struct BenchInputs {
  explicit BenchInputs(int64_t n_tokens)
      : row_stride(2 * kNumKHeads * kHeadDim + kNumVHeads * kHeadDim),
        qkv(n_tokens * row_stride),
        g(n_tokens * kNumVHeads),
        beta(n_tokens * kNumVHeads),
        state(kNumVHeads * kHeadDim * kHeadDim, 0.0f),
        out(n_tokens * kNumVHeads * kHeadDim) {
    std::mt19937 rng(1);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (float& x : qkv) x = normal(rng);
    const int64_t key_dim = kNumKHeads * kHeadDim;
    for (int64_t t = 0; t < n_tokens; ++t) {
      L2NormalizeHeads(qkv.data() + t * row_stride, kNumKHeads, kHeadDim, 1e-6f, 0.125f);
      L2NormalizeHeads(qkv.data() + t * row_stride + key_dim, kNumKHeads, kHeadDim, 1e-6f, 1.0f);
    }
    for (float& x : g) x = -Softplus(normal(rng));
    for (float& x : beta) x = Sigmoid(normal(rng));
    args.q = qkv.data();
    args.k = args.q + key_dim;
    args.v = args.k + key_dim;
    args.g = g.data();
    args.beta = beta.data();
    args.q_stride = args.k_stride = args.v_stride = row_stride;
    args.n_tokens = n_tokens;
    args.num_k_heads = kNumKHeads;
    args.num_v_heads = kNumVHeads;
    args.head_dim_k = args.head_dim_v = kHeadDim;
    args.mapping = KeyHeadMapping::kTiled;
    args.state = state.data();
    args.out = out.data();
  }

  int64_t row_stride;
  std::vector<float> qkv, g, beta, state, out;
  GatedDeltaArgs args;
};

// Args: n_tokens, threads (0 = no pool).
void BM_GatedDelta(benchmark::State& state) {
  const int64_t n_tokens = state.range(0);
  BenchInputs in(n_tokens);
  std::unique_ptr<ThreadPool> pool;
  if (state.range(1) > 0) pool = std::make_unique<ThreadPool>(static_cast<int>(state.range(1)));
  for (auto _ : state) {
    GatedDeltaRecurrent(in.args, pool.get());
    benchmark::DoNotOptimize(in.out.data());
  }
  state.SetItemsProcessed(state.iterations() * n_tokens);
}

BENCHMARK(BM_GatedDelta)
    ->Name("recurrent")
    ->ArgsProduct({{1, 4, 16, 512, 2048}, {0, 2}})
    ->UseRealTime();

}  // namespace
}  // namespace ds::kernels

BENCHMARK_MAIN();
