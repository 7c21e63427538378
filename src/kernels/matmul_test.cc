// MatVec/MatMul under every supported ISA against the scalar reference, for every weight dtype.
//
// Tolerances, as ||y - y_ref|| / ||y_ref||:
//   F32, F16, BF16 weights: 1e-5 (f32 accumulation order only); BF16 weights in a table that
//   rounds activations to bf16: 1e-5 against the reference fed those activations, 1e-2 against
//   the plain one.
//   Quantised weights against the reference fed the same int8-rounded activations: 2e-5 (the block
//   arithmetic is exact in int32; only scale products and accumulation order differ).
//   Quantised weights against the plain f32 reference: int8 activation rounding, one scale per 32
//   (legacy types) or 256 (K-quants) activations: 1e-2 and 2e-2 (typically 4e-3 and 8e-3; single
//   rows of random-byte weights with large mins reach 1.3e-2).

#include <cstddef>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "kernels/act_quant.h"
#include "kernels/kernels.h"
#include "kernels/ref/ref.h"
#include "kernels/test_util.h"
#include "tensor/blocks.h"
#include "tensor/dtype.h"
#include "tensor/fp16.h"
#include "tensor/quant.h"

namespace ds::kernels {
namespace {

using tensor::DType;

constexpr DType kWeightTypes[] = {DType::kF32,  DType::kF16,  DType::kBF16, DType::kQ4_0,
                                  DType::kQ4_1, DType::kQ5_0, DType::kQ5_1, DType::kQ8_0,
                                  DType::kQ2_K, DType::kQ3_K, DType::kQ4_K, DType::kQ5_K,
                                  DType::kQ6_K};

bool IsFloatType(DType t) { return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16; }

// Small random half scales, so that every code pattern yields finite, moderate weights.
uint16_t RandomScale(std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(0.002f, 0.02f);
  return tensor::Fp32ToFp16((rng() & 1) ? dist(rng) : -dist(rng));
}

// Overwrites the half-precision scale fields of every block in `row` (random bytes elsewhere).
template <typename Block>
void FixScales(uint8_t* row, int64_t n_blocks, std::mt19937& rng,
               std::initializer_list<size_t> offsets) {
  for (int64_t b = 0; b < n_blocks; ++b) {
    for (size_t off : offsets) {
      const uint16_t h = RandomScale(rng);
      std::memcpy(row + b * static_cast<int64_t>(sizeof(Block)) + off, &h, 2);
    }
  }
}

void FillRandomRow(DType type, int64_t n_cols, std::mt19937& rng, uint8_t* row) {
  if (IsFloatType(type)) {
    const std::vector<float> v = RandomFloats(rng, n_cols);
    for (int64_t i = 0; i < n_cols; ++i) {
      if (type == DType::kF32) std::memcpy(row + 4 * i, &v[i], 4);
      const uint16_t h = type == DType::kF16 ? tensor::Fp32ToFp16(v[i]) : tensor::Fp32ToBf16(v[i]);
      if (type != DType::kF32) std::memcpy(row + 2 * i, &h, 2);
    }
    return;
  }
  const int64_t bytes = tensor::RowBytes(type, n_cols);
  for (int64_t i = 0; i < bytes; ++i) row[i] = static_cast<uint8_t>(rng());
  const int64_t nb = n_cols / tensor::Traits(type).block_elems;
  using namespace tensor;
  switch (type) {
    case DType::kQ4_0:
      return FixScales<BlockQ4_0>(row, nb, rng, {offsetof(BlockQ4_0, d)});
    case DType::kQ4_1:
      return FixScales<BlockQ4_1>(row, nb, rng, {offsetof(BlockQ4_1, d), offsetof(BlockQ4_1, m)});
    case DType::kQ5_0:
      return FixScales<BlockQ5_0>(row, nb, rng, {offsetof(BlockQ5_0, d)});
    case DType::kQ5_1:
      return FixScales<BlockQ5_1>(row, nb, rng, {offsetof(BlockQ5_1, d), offsetof(BlockQ5_1, m)});
    case DType::kQ8_0:
      return FixScales<BlockQ8_0>(row, nb, rng, {offsetof(BlockQ8_0, d)});
    case DType::kQ2_K:
      return FixScales<BlockQ2_K>(row, nb, rng,
                                  {offsetof(BlockQ2_K, d), offsetof(BlockQ2_K, dmin)});
    case DType::kQ3_K:
      return FixScales<BlockQ3_K>(row, nb, rng, {offsetof(BlockQ3_K, d)});
    case DType::kQ4_K:
      return FixScales<BlockQ4_K>(row, nb, rng,
                                  {offsetof(BlockQ4_K, d), offsetof(BlockQ4_K, dmin)});
    case DType::kQ5_K:
      return FixScales<BlockQ5_K>(row, nb, rng,
                                  {offsetof(BlockQ5_K, d), offsetof(BlockQ5_K, dmin)});
    case DType::kQ6_K:
      return FixScales<BlockQ6_K>(row, nb, rng, {offsetof(BlockQ6_K, d)});
    default:
      FAIL() << "unexpected dtype";
  }
}

// A random matrix whose data starts deliberately off 32-byte alignment.
struct TestMatrix {
  std::vector<uint8_t> storage;
  MatrixView view;
};

TestMatrix MakeMatrix(DType type, int64_t n_rows, int64_t n_cols, std::mt19937& rng) {
  TestMatrix m;
  const int64_t row_bytes = tensor::RowBytes(type, n_cols);
  const int64_t misalign = type == DType::kF32 ? 4 : 2;
  m.storage.resize(static_cast<size_t>(n_rows * row_bytes + 64));
  uint8_t* base = m.storage.data() + (32 - reinterpret_cast<uintptr_t>(m.storage.data()) % 32) % 32;
  uint8_t* data = base + misalign;
  for (int64_t r = 0; r < n_rows; ++r) FillRandomRow(type, n_cols, rng, data + r * row_bytes);
  m.view = {data, type, n_rows, n_cols, row_bytes};
  return m;
}

std::vector<int64_t> ColumnCounts(DType type) {
  const int64_t block = tensor::Traits(type).block_elems;
  if (block == 1) return {1, 7, 16, 31, 33, 100, 257, 1000};
  if (block == 32) return {32, 64, 96, 288, 1056};
  return {256, 512, 1280};
}

bool RoundsActivations(DType type) {
  return internal::ActFormatFor(type) == internal::ActFormat::kBf16;
}

class MatMulTest : public IsaTest {};

TEST_P(MatMulTest, MatchesReferenceForEveryDtypeAndShape) {
  std::mt19937 rng(1234);
  ThreadPool pool(2);
  for (DType type : kWeightTypes) {
    for (int64_t n_cols : ColumnCounts(type)) {
      for (int64_t n_tokens : {1, 2, 3, 4, 5, 9}) {
        const int64_t n_rows = 1 + static_cast<int64_t>(rng() % 19);
        SCOPED_TRACE(testing::Message() << tensor::DTypeName(type) << " rows=" << n_rows
                                        << " cols=" << n_cols << " tokens=" << n_tokens);
        TestMatrix m = MakeMatrix(type, n_rows, n_cols, rng);
        // One extra float in front so activation rows are off vector alignment.
        std::vector<float> x_storage = RandomFloats(rng, n_tokens * n_cols + 1);
        const std::vector<float> x(x_storage.begin() + 1, x_storage.end());
        std::vector<float> y(static_cast<size_t>(n_tokens * n_rows));
        MatMul(m.view, x_storage.data() + 1, n_tokens, y.data(), &pool);

        std::vector<float> exact(y.size()), plain(y.size());
        ref::MatMul(m.view, AsKernelSeesIt(type, x, n_tokens, n_cols).data(), n_tokens,
                    exact.data());
        ref::MatMul(m.view, x.data(), n_tokens, plain.data());
        const bool is_float = IsFloatType(type);
        EXPECT_LT(RelativeError(y.data(), exact.data(), y.size()), is_float ? 1e-5 : 2e-5);
        const double act_tolerance =
            is_float ? (RoundsActivations(type) ? 1e-2 : 1e-5)
                     : (tensor::Traits(type).block_elems == tensor::kQK ? 1e-2 : 2e-2);
        EXPECT_LT(RelativeError(y.data(), plain.data(), y.size()), act_tolerance);
      }
    }
  }
}

TEST_P(MatMulTest, IndependentOfThreadCountAndTokenTiling) {
  std::mt19937 rng(99);
  ThreadPool pool1(1), pool2(2), pool3(3);
  for (DType type : kWeightTypes) {
    SCOPED_TRACE(tensor::DTypeName(type));
    const int64_t n_cols = 512, n_rows = 67, n_tokens = 7;
    TestMatrix m = MakeMatrix(type, n_rows, n_cols, rng);
    const std::vector<float> x = RandomFloats(rng, n_tokens * n_cols);
    std::vector<float> y_null(n_tokens * n_rows), y1(y_null.size()), y2(y_null.size()),
        y3(y_null.size());
    MatMul(m.view, x.data(), n_tokens, y_null.data(), nullptr);
    MatMul(m.view, x.data(), n_tokens, y1.data(), &pool1);
    MatMul(m.view, x.data(), n_tokens, y2.data(), &pool2);
    MatMul(m.view, x.data(), n_tokens, y3.data(), &pool3);
    EXPECT_EQ(y_null, y1);
    EXPECT_EQ(y_null, y2);
    EXPECT_EQ(y_null, y3);
    // A token computed alone (MatVec) gives the same bits as inside a tile of MatMul.
    for (int64_t t = 0; t < n_tokens; ++t) {
      std::vector<float> single(n_rows);
      MatVec(m.view, x.data() + t * n_cols, single.data(), &pool2);
      EXPECT_EQ(0, std::memcmp(single.data(), y_null.data() + t * n_rows, n_rows * sizeof(float)))
          << "token " << t;
    }
  }
}

// Weights quantised from floats, as real models have them: Q8_0 codes then stay in [-127, 127],
// which the tile kernels of some tables take a faster path for than for random bytes (whose
// codes include -128). Every token count up to two tiles (and one past a wide path's tile) and a
// ragged row count, against the reference and against each token alone, for every block type and
// rows of 1 to 11 blocks (one token takes rows of few super-blocks several at a time, and longer
// ones four blocks at a time).
TEST_P(MatMulTest, QuantisedFromFloatsMatchesReferenceAndEachTokenAlone) {
  std::mt19937 rng(2024);
  ThreadPool pool(2);
  for (DType type : {DType::kQ4_0, DType::kQ4_1, DType::kQ5_0, DType::kQ5_1, DType::kQ8_0,
                     DType::kQ2_K, DType::kQ3_K, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K}) {
    for (int64_t n_blocks : {1, 2, 3, 5, 9, 11}) {
      const int64_t n_rows = 13;
      const int64_t n_cols = tensor::Traits(type).block_elems * n_blocks;
      const int64_t row_bytes = tensor::RowBytes(type, n_cols);
      std::vector<uint8_t> data(static_cast<size_t>(n_rows * row_bytes));
      for (int64_t r = 0; r < n_rows; ++r) {
        const std::vector<float> row = RandomFloats(rng, n_cols);
        tensor::QuantizeRow(type, row.data(), data.data() + r * row_bytes, n_cols);
      }
      const MatrixView w{data.data(), type, n_rows, n_cols, row_bytes};
      for (int64_t n_tokens = 1; n_tokens <= 17; ++n_tokens) {
        SCOPED_TRACE(testing::Message() << tensor::DTypeName(type) << " blocks=" << n_blocks
                                        << " tokens=" << n_tokens);
        const std::vector<float> x = RandomFloats(rng, n_tokens * n_cols);
        std::vector<float> y(static_cast<size_t>(n_tokens * n_rows)), exact(y.size());
        MatMul(w, x.data(), n_tokens, y.data(), &pool);
        ref::MatMul(w, AsKernelSeesIt(type, x, n_tokens, n_cols).data(), n_tokens, exact.data());
        EXPECT_LT(RelativeError(y.data(), exact.data(), y.size()), 2e-5);
        for (int64_t t = 0; t < n_tokens; ++t) {
          std::vector<float> single(n_rows);
          MatVec(w, x.data() + t * n_cols, single.data(), nullptr);
          EXPECT_EQ(0, std::memcmp(single.data(), y.data() + t * n_rows, n_rows * sizeof(float)))
              << "token " << t;
        }
      }
    }
  }
}

// Matrices of several row blocks (the unit a task keeps in cache and, for the K-quants, decodes
// once for all its tiles of tokens) give each token MatVec's bits, from one thread and two.
TEST_P(MatMulTest, RowBlocksGiveEachTokenItsMatVecBits) {
  std::mt19937 rng(99);
  ThreadPool pool(2);
  const int64_t n_rows = 301, n_cols = 1280, n_tokens = 21;
  for (DType type : {DType::kQ8_0, DType::kQ4_0, DType::kQ4_1, DType::kQ5_0, DType::kQ5_1,
                     DType::kQ2_K, DType::kQ3_K, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K,
                     DType::kF16}) {
    SCOPED_TRACE(tensor::DTypeName(type));
    const TestMatrix m = MakeMatrix(type, n_rows, n_cols, rng);
    const std::vector<float> x = RandomFloats(rng, n_tokens * n_cols);
    for (ThreadPool* threads : {static_cast<ThreadPool*>(nullptr), &pool}) {
      std::vector<float> y(static_cast<size_t>(n_tokens * n_rows));
      MatMul(m.view, x.data(), n_tokens, y.data(), threads);
      for (int64_t t = 0; t < n_tokens; ++t) {
        std::vector<float> single(n_rows);
        MatVec(m.view, x.data() + t * n_cols, single.data(), nullptr);
        EXPECT_EQ(0, std::memcmp(single.data(), y.data() + t * n_rows, n_rows * sizeof(float)))
            << "token " << t;
      }
    }
  }
}

// A batch of jobs of every dtype and shape, split across a pool, gives each job's MatVec bits.
TEST_P(MatMulTest, OneTokenMatMulsEqualOneMatVecPerJob) {
  std::mt19937 rng(77);
  ThreadPool pool(3);
  std::vector<TestMatrix> matrices;
  std::vector<std::vector<float>> inputs;
  for (DType type : kWeightTypes) {
    for (int64_t n_rows : {1, 37}) {
      matrices.push_back(MakeMatrix(type, n_rows, 256 * (1 + n_rows % 2), rng));
      inputs.push_back(RandomFloats(rng, matrices.back().view.n_cols));
    }
  }
  // Jobs that share one input, as a MoE layer's gate and up products do: those of one
  // activation format share its encoding, the others get their own.
  const std::vector<float> shared = RandomFloats(rng, 256);
  const size_t own_inputs = matrices.size();
  for (DType type : {DType::kQ8_0, DType::kQ4_0, DType::kQ4_K, DType::kQ6_K, DType::kF16}) {
    matrices.push_back(MakeMatrix(type, 9, 256, rng));
  }
  std::vector<std::vector<float>> got(matrices.size()), want(matrices.size());
  std::vector<MatMulJob> jobs;
  for (size_t j = 0; j < matrices.size(); ++j) {
    const float* x = j < own_inputs ? inputs[j].data() : shared.data();
    got[j].assign(matrices[j].view.n_rows, -1.0f);
    want[j].assign(matrices[j].view.n_rows, 0.0f);
    MatVec(matrices[j].view, x, want[j].data(), nullptr);
    jobs.push_back({matrices[j].view, x, 1, got[j].data()});
  }
  MatMuls(jobs, &pool);
  for (size_t j = 0; j < matrices.size(); ++j) {
    EXPECT_EQ(got[j], want[j]) << tensor::DTypeName(matrices[j].view.type) << " job " << j;
  }
  MatMuls({}, &pool);  // nothing to do is fine
}

// Prompts: jobs that share an input share its encoding and tiles, the others (another input, or
// another activation format) get their own, and every y equals its MatMul.
TEST_P(MatMulTest, MatMulsEqualsOneMatMulPerJob) {
  std::mt19937 rng(78);
  ThreadPool pool(3);
  const int64_t n_cols = 512;
  // 13 tokens: a full tile of 8 and a partial one, or on a wide path one partial wide tile (Q8_0
  // beside Q4_0, whose activations have the same format but are tiled).
  const int64_t n_tokens = 13;
  const std::vector<float> x = RandomFloats(rng, n_tokens * n_cols);
  const std::vector<float> other_x = RandomFloats(rng, n_tokens * n_cols);
  // {dtype, rows, reads other_x}
  const auto check = [&](std::initializer_list<std::tuple<DType, int64_t, bool>> shapes) {
    std::vector<TestMatrix> matrices;
    std::vector<const float*> inputs;
    for (const auto& [type, n_rows, other] : shapes) {
      matrices.push_back(MakeMatrix(type, n_rows, n_cols, rng));
      inputs.push_back(other ? other_x.data() : x.data());
    }
    std::vector<std::vector<float>> got(matrices.size()), want(matrices.size());
    std::vector<MatMulJob> jobs;
    for (size_t j = 0; j < matrices.size(); ++j) {
      const int64_t n_out = n_tokens * matrices[j].view.n_rows;
      got[j].assign(n_out, -1.0f);
      want[j].assign(n_out, 0.0f);
      MatMul(matrices[j].view, inputs[j], n_tokens, want[j].data(), nullptr);
      jobs.push_back({matrices[j].view, inputs[j], n_tokens, got[j].data()});
    }
    MatMuls(jobs, &pool);
    for (size_t j = 0; j < matrices.size(); ++j) {
      EXPECT_EQ(got[j], want[j]) << tensor::DTypeName(matrices[j].view.type) << " job " << j;
    }
  };
  // One input and format (row counts that split tasks inside and across matrices).
  check({{DType::kQ8_0, 300, false}, {DType::kQ8_0, 1, false}, {DType::kQ4_0, 37, false}});
  check({{DType::kQ4_K, 64, false}, {DType::kQ6_K, 129, false}, {DType::kQ5_K, 3, false}});
  check({{DType::kF16, 40, false}, {DType::kBF16, 17, false}, {DType::kF32, 5, false}});
  // Formats and inputs mixed.
  check({{DType::kQ8_0, 33, false}, {DType::kQ4_K, 20, false}, {DType::kF16, 7, false},
         {DType::kQ8_0, 2, true}, {DType::kQ4_K, 65, true}, {DType::kQ8_0, 9, false}});
  MatMuls({}, &pool);  // nothing to do is fine
}

// rows_done hears of every row of a job once, in ranges aligned to its row_align (or ending at
// the last row), only once those rows are final for every token; the products keep their bits.
TEST_P(MatMulTest, RowsDoneHearsOfEachFinalRowOnceAligned) {
  std::mt19937 rng(79);
  for (int threads : {1, 3}) {
    ThreadPool pool(threads);
    for (const int64_t n_tokens : {1, 5}) {
      const TestMatrix aligned = MakeMatrix(DType::kQ8_0, 300, 256, rng);
      const TestMatrix other = MakeMatrix(DType::kQ4_K, 48, 256, rng);
      const std::vector<float> x = RandomFloats(rng, n_tokens * 256);
      std::vector<float> want(n_tokens * 300), got(n_tokens * 300, -1.0f);
      std::vector<float> other_got(n_tokens * 48);
      MatMul(aligned.view, x.data(), n_tokens, want.data(), nullptr);
      std::vector<int> heard(300, 0);
      std::mutex mu;
      bool aligned_ok = true, final_ok = true;
      const auto note = [&](int64_t r0, int64_t r1) {
        std::lock_guard<std::mutex> lock(mu);
        aligned_ok &= r0 % 64 == 0 && (r1 % 64 == 0 || r1 == 300) && r0 < r1;
        for (int64_t r = r0; r < r1; ++r) {
          ++heard[r];
          for (int64_t t = 0; t < n_tokens; ++t) final_ok &= got[t * 300 + r] == want[t * 300 + r];
        }
      };
      const FunctionRef<void(int64_t, int64_t)> rows_done = note;
      const MatMulJob jobs[] = {
          {aligned.view, x.data(), n_tokens, got.data(), nullptr, &rows_done, 64},
          {other.view, x.data(), n_tokens, other_got.data()}};
      MatMuls(jobs, &pool);
      const std::string label = std::to_string(threads) + " threads, " +
                                std::to_string(n_tokens) + " tokens";
      EXPECT_EQ(got, want) << label;
      EXPECT_TRUE(aligned_ok) << label;
      EXPECT_TRUE(final_ok) << label;
      EXPECT_EQ(heard, std::vector<int>(300, 1)) << label;
    }
  }
}

// Jobs with their own token counts, as a MoE layer's experts: one input read by two counts is
// encoded once per count, a job of no tokens writes nothing, and every y equals its MatMul. The
// tasks are cut by multiply-adds, so the 200-token job's rows are spread over several tasks.
TEST_P(MatMulTest, MatMulsTakesEachJobsOwnTokenCount) {
  std::mt19937 rng(91);
  ThreadPool pool(3);
  const int64_t n_cols = 256;
  const std::vector<float> x = RandomFloats(rng, 200 * n_cols);
  // {dtype, rows, tokens}
  const std::vector<std::tuple<DType, int64_t, int64_t>> shapes = {
      {DType::kQ8_0, 48, 200}, {DType::kQ8_0, 48, 5}, {DType::kQ8_0, 16, 0}, {DType::kQ4_K, 33, 17},
      {DType::kQ8_0, 7, 1},    {DType::kF16, 9, 40},  {DType::kQ6_K, 64, 200}};
  std::vector<TestMatrix> matrices;
  std::vector<std::vector<float>> got, want;
  std::vector<MatMulJob> jobs;
  for (const auto& [type, n_rows, n_tokens] : shapes) {
    matrices.push_back(MakeMatrix(type, n_rows, n_cols, rng));
    got.emplace_back(std::max<int64_t>(1, n_tokens) * n_rows, -1.0f);
    want.emplace_back(std::max<int64_t>(1, n_tokens) * n_rows, -1.0f);
    if (n_tokens > 0) MatMul(matrices.back().view, x.data(), n_tokens, want.back().data(), nullptr);
  }
  for (size_t j = 0; j < shapes.size(); ++j) {
    jobs.push_back({matrices[j].view, x.data(), std::get<2>(shapes[j]), got[j].data()});
  }
  MatMuls(jobs, &pool);
  for (size_t j = 0; j < shapes.size(); ++j) {
    EXPECT_EQ(got[j], want[j]) << tensor::DTypeName(matrices[j].view.type) << " job " << j;
  }
}

// Jobs that read rows of one input by index, as a MoE layer's experts do, beside one that reads
// it whole: each y equals the MatMul of the rows gathered by hand, on every path (a wide run of
// 20 rows, tiles of 3, one row, float activations).
TEST_P(MatMulTest, MatMulsGathersRowsOfItsInput) {
  std::mt19937 rng(17);
  ThreadPool pool(3);
  const int64_t n_cols = 256, n_x_rows = 30;
  const std::vector<float> x = RandomFloats(rng, n_x_rows * n_cols);
  std::vector<int64_t> picks20;
  for (int i = 0; i < 20; ++i) picks20.push_back((i * 7 + 3) % n_x_rows);
  const std::vector<int64_t> picks3 = {29, 0, 29}, picks1 = {12};
  struct Case {
    DType type;
    int64_t n_rows;
    const std::vector<int64_t>* picks;  // null: all of x
  };
  const std::vector<Case> cases = {{DType::kQ8_0, 40, &picks20}, {DType::kQ8_0, 16, &picks3},
                                   {DType::kQ4_K, 9, &picks20},  {DType::kQ8_0, 5, &picks1},
                                   {DType::kF32, 7, &picks3},    {DType::kQ8_0, 33, nullptr},
                                   {DType::kF16, 4, &picks20}};
  std::vector<TestMatrix> matrices;
  std::vector<std::vector<float>> got, want;
  std::vector<MatMulJob> jobs;
  for (const Case& c : cases) {
    matrices.push_back(MakeMatrix(c.type, c.n_rows, n_cols, rng));
    const int64_t n_tokens = c.picks ? static_cast<int64_t>(c.picks->size()) : n_x_rows;
    std::vector<float> rows;
    for (int64_t t = 0; t < n_tokens; ++t) {
      const int64_t r = c.picks ? (*c.picks)[t] : t;
      rows.insert(rows.end(), x.begin() + r * n_cols, x.begin() + (r + 1) * n_cols);
    }
    want.emplace_back(n_tokens * c.n_rows, 0.0f);
    MatMul(matrices.back().view, rows.data(), n_tokens, want.back().data(), nullptr);
    got.emplace_back(n_tokens * c.n_rows, -1.0f);
  }
  for (size_t j = 0; j < cases.size(); ++j) {
    const std::vector<int64_t>* picks = cases[j].picks;
    jobs.push_back({matrices[j].view, x.data(),
                    picks ? static_cast<int64_t>(picks->size()) : n_x_rows, got[j].data(),
                    picks ? picks->data() : nullptr});
  }
  MatMuls(jobs, &pool);
  for (size_t j = 0; j < cases.size(); ++j) {
    EXPECT_EQ(got[j], want[j]) << tensor::DTypeName(matrices[j].view.type) << " job " << j;
  }
}

TEST_P(MatMulTest, ZeroActivationsGiveZero) {
  std::mt19937 rng(5);
  for (DType type : kWeightTypes) {
    const int64_t n_cols = 256;
    TestMatrix m = MakeMatrix(type, 5, n_cols, rng);
    const std::vector<float> x(n_cols, 0.0f);
    std::vector<float> y(5, 1.0f);
    MatVec(m.view, x.data(), y.data(), nullptr);
    for (float v : y) EXPECT_EQ(v, 0.0f) << tensor::DTypeName(type);
  }
}

// Only the AMX table has a wide path, and it serves Q8_0 prompts: without that, the tests above
// would pass on the fallback tiles and never reach the tile products.
TEST_P(MatMulTest, OnlyTheAmxTableServesQ8_0PromptsOnAWidePath) {
  const internal::KernelTable& table = internal::Table();
  if (GetParam() != internal::Isa::kAvx512Amx) {
    EXPECT_EQ(table.wide_q8, nullptr);
    return;
  }
  ASSERT_NE(table.wide_q8, nullptr);
  EXPECT_NE(table.wide_q8(DType::kQ8_0).tile, nullptr);
  EXPECT_EQ(table.wide_q8(DType::kQ4_K).tile, nullptr);
}

DS_INSTANTIATE_FOR_EACH_ISA(MatMulTest);

TEST(DispatchTest, ParsesIsaNamesAndReportsTheActiveOne) {
  EXPECT_EQ(internal::ParseIsa("avx2"), internal::Isa::kAvx2);
  EXPECT_EQ(internal::ParseIsa("avx512"), internal::Isa::kAvx512);
  EXPECT_EQ(internal::ParseIsa("avx512_bf16"), internal::Isa::kAvx512Bf16);
  EXPECT_EQ(internal::ParseIsa("avx512_amx"), internal::Isa::kAvx512Amx);
  EXPECT_EQ(internal::ParseIsa("neon"), internal::Isa::kNeon);
  EXPECT_EQ(internal::ParseIsa("neon_dotprod"), internal::Isa::kNeonDotprod);
  EXPECT_EQ(internal::ParseIsa("scalar"), internal::Isa::kScalar);
  EXPECT_FALSE(internal::ParseIsa("sse9").has_value());
  EXPECT_EQ(ActiveIsa(), internal::IsaName(internal::CurrentIsa()));
  EXPECT_EQ(internal::SupportedIsas().front(), internal::Isa::kScalar);
}

}  // namespace
}  // namespace ds::kernels
