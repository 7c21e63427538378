// MatVec throughput per weight dtype on a 4096 x 4096 matrix, reported as weight bytes streamed per
// second (GB/s). Not part of ctest. Flags beyond Google Benchmark's own: the environment variable
// DS_KERNELS_ISA picks the path; --threads=N (default 2) sizes the pool.
//   ./build/src/kernels/kernels_bench --threads=2

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "tensor/dtype.h"
#include "tensor/quant.h"

namespace ds::kernels {
namespace {

constexpr int64_t kRows = 4096;
constexpr int64_t kCols = 4096;
int g_threads = 2;

void BM_MatVec(benchmark::State& state, tensor::DType type) {
  std::mt19937 rng(42);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> row(kCols);
  const int64_t row_bytes = tensor::RowBytes(type, kCols);
  std::vector<uint8_t> data(static_cast<size_t>(row_bytes * kRows));
  for (int64_t r = 0; r < kRows; ++r) {
    for (float& v : row) v = dist(rng) * 0.02f;
    tensor::QuantizeRow(type, row.data(), data.data() + r * row_bytes, kCols);
  }
  const MatrixView w{data.data(), type, kRows, kCols, row_bytes};
  std::vector<float> x(kCols), y(kRows);
  for (float& v : x) v = dist(rng);
  ThreadPool pool(g_threads);
  for (auto _ : state) {
    MatVec(w, x.data(), y.data(), &pool);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(state.iterations() * row_bytes * kRows);
  state.SetLabel(std::string(ActiveIsa()) + " threads=" + std::to_string(g_threads));
}

void RegisterAll() {
  using tensor::DType;
  for (DType type : {DType::kF32, DType::kF16, DType::kBF16, DType::kQ8_0, DType::kQ4_0,
                     DType::kQ4_1, DType::kQ5_0, DType::kQ5_1, DType::kQ2_K, DType::kQ3_K,
                     DType::kQ4_K, DType::kQ5_K, DType::kQ6_K}) {
    const std::string name = "MatVec4096/" + std::string(tensor::DTypeName(type));
    benchmark::RegisterBenchmark(name.c_str(), BM_MatVec, type)
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
