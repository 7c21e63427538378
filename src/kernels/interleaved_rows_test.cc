// K-quant matrices with rows interleaved for the active table (InterleaveRows) under every ISA:
// which matrices qualify, and that the rewritten bytes multiply like the rows they came from
// (within the reference's tolerance, 2e-5 against int8-rounded activations as in matmul_test),
// each token with its bits alone, on any number of threads, alone or among other jobs.

#include <algorithm>
#include <cstring>
#include <iterator>
#include <random>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/ref/ref.h"
#include "kernels/test_util.h"
#include "tensor/dtype.h"
#include "tensor/fp16.h"
#include "tensor/quant.h"

namespace ds::kernels {
namespace {

using tensor::DType;

// A matrix quantised from random floats, the data its view reads, and a copy kept in rows.
struct QuantMatrix {
  std::vector<uint8_t> data;
  std::vector<uint8_t> as_rows;
  MatrixView view;
  MatrixView rows_view;
};

QuantMatrix MakeMatrix(std::mt19937& rng, DType type, int64_t n_rows, int64_t n_cols) {
  QuantMatrix m;
  const int64_t row_bytes = tensor::RowBytes(type, n_cols);
  m.data.resize(static_cast<size_t>(n_rows * row_bytes));
  for (int64_t r = 0; r < n_rows; ++r) {
    const std::vector<float> row = RandomFloats(rng, n_cols);
    tensor::QuantizeRow(type, row.data(), m.data.data() + r * row_bytes, n_cols);
  }
  m.as_rows = m.data;
  m.view = {m.data.data(), type, n_rows, n_cols, row_bytes};
  m.rows_view = {m.as_rows.data(), type, n_rows, n_cols, row_bytes};
  return m;
}

// The dtypes with an interleaved layout on the tables that have one.
constexpr DType kInterleavable[] = {DType::kQ4_K, DType::kQ5_K, DType::kQ6_K};

bool TableInterleaves(DType type) {
  const internal::KernelTable& table = internal::Table();
  return table.interleaved != nullptr && table.interleaved(type).interleave != nullptr;
}

bool TableInterleavesAny() {
  return std::any_of(std::begin(kInterleavable), std::end(kInterleavable), TableInterleaves);
}

// How a test's matrix bytes are made: by the quantiser; every code and scale byte drawn at random
// (the quantiser never writes some of them, such as a Q6_K scale of -128 or all-ones high bits);
// or every one all ones, which for Q4_K and Q5_K are the largest codes, scales and mins and with
// activations of one sign all of one value (every int8 code at -127 or 127) put those kernels'
// integer sums at their largest (a Q6_K scale of all ones is -1). The float factors stay finite.
enum class CodeBytes { kQuantised, kRandom, kAllOnes };

void RewriteCodesAndScales(std::mt19937& rng, CodeBytes how, QuantMatrix& m) {
  const int64_t block_bytes = tensor::Traits(m.view.type).block_bytes;
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> factor(1e-3f, 1e-2f);
  for (uint8_t& b : m.data) b = how == CodeBytes::kAllOnes ? 0xff : static_cast<uint8_t>(byte(rng));
  // The f16 factors: d and dmin first in Q4_K and Q5_K, d last in Q6_K.
  const std::vector<int64_t> factor_offsets =
      m.view.type == DType::kQ6_K ? std::vector<int64_t>{block_bytes - 2}
                                  : std::vector<int64_t>{0, 2};
  for (size_t at = 0; at < m.data.size(); at += static_cast<size_t>(block_bytes)) {
    for (int64_t offset : factor_offsets) {
      const uint16_t h = tensor::Fp32ToFp16(factor(rng));
      std::memcpy(&m.data[at + static_cast<size_t>(offset)], &h, sizeof(h));
    }
  }
  m.as_rows = m.data;
}

class InterleavedRowsTest : public IsaTest {};

TEST_P(InterleavedRowsTest, OnlyWholeGroupsOfUnpaddedKQuantRowsQualify) {
  std::mt19937 rng(5);
  for (DType type : kInterleavable) {
    SCOPED_TRACE(tensor::DTypeName(type));
    QuantMatrix m = MakeMatrix(rng, type, 48, 512);
    EXPECT_EQ(CanInterleaveRows(m.view), TableInterleaves(type));
    MatrixView ragged = m.view;
    ragged.n_rows = 40;
    EXPECT_FALSE(CanInterleaveRows(ragged));
    MatrixView padded = m.view;
    padded.n_rows = 24;
    padded.row_bytes *= 2;
    EXPECT_FALSE(CanInterleaveRows(padded));
    if (!TableInterleaves(type)) continue;
    const MatrixView interleaved = InterleaveRows(m.view, m.data.data());
    EXPECT_TRUE(interleaved.interleaved);
    EXPECT_FALSE(CanInterleaveRows(interleaved));
    EXPECT_NE(m.data, m.as_rows);
  }
  for (DType type : {DType::kQ8_0, DType::kQ2_K, DType::kQ3_K, DType::kBF16}) {
    SCOPED_TRACE(tensor::DTypeName(type));
    EXPECT_FALSE(CanInterleaveRows(MakeMatrix(rng, type, 16, 256).view));
  }
}

TEST_P(InterleavedRowsTest, MultipliesLikeItsRowsWithEachTokensBitsAlone) {
  if (!TableInterleavesAny()) GTEST_SKIP() << "this table reads K-quant rows as they lie";
  std::mt19937 rng(6);
  ThreadPool pool2(2), pool3(3);
  for (DType type : kInterleavable) {
    if (!TableInterleaves(type)) continue;
    for (CodeBytes how : {CodeBytes::kQuantised, CodeBytes::kRandom, CodeBytes::kAllOnes}) {
      for (int64_t n_cols : {256, 512, 1280}) {
        const int64_t n_rows = 48;
        QuantMatrix m = MakeMatrix(rng, type, n_rows, n_cols);
        if (how != CodeBytes::kQuantised) RewriteCodesAndScales(rng, how, m);
        const MatrixView w = InterleaveRows(m.view, m.data.data());
        for (int64_t n_tokens : {1, 2, 3, 4, 5, 8, 9, 17}) {
          SCOPED_TRACE(testing::Message() << tensor::DTypeName(type) << " code bytes "
                                          << static_cast<int>(how) << " cols=" << n_cols
                                          << " tokens=" << n_tokens);
          std::vector<float> x = RandomFloats(rng, n_tokens * n_cols);
          if (how == CodeBytes::kAllOnes) {
            for (int64_t t = 0; t < n_tokens; ++t) {
              std::fill_n(x.begin() + t * n_cols, n_cols, t % 2 == 0 ? 1.0f : -1.0f);
            }
          }
          std::vector<float> y(static_cast<size_t>(n_tokens * n_rows)), exact(y.size());
          MatMul(w, x.data(), n_tokens, y.data(), &pool2);
          ref::MatMul(m.rows_view, AsKernelSeesIt(type, x, n_tokens, n_cols).data(), n_tokens,
                      exact.data());
          EXPECT_LT(RelativeError(y.data(), exact.data(), y.size()), 2e-5);
          for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool3}) {
            std::vector<float> again(y.size());
            MatMul(w, x.data(), n_tokens, again.data(), pool);
            EXPECT_EQ(again, y);
          }
          for (int64_t t = 0; t < n_tokens; ++t) {
            std::vector<float> single(n_rows);
            MatVec(w, x.data() + t * n_cols, single.data(), &pool3);
            EXPECT_EQ(0,
                      std::memcmp(single.data(), y.data() + t * n_rows, n_rows * sizeof(float)))
                << "token " << t;
          }
        }
      }
    }
  }
}

// Among jobs of rows as they lie (a layer's experts may be either), each job gets what MatMul
// gives it alone, also where both kinds read one encoding of the same tokens (which then has
// the tiles the plain rows take and the interleaved ones skip).
TEST_P(InterleavedRowsTest, MatMulsMixInterleavedAndPlainJobs) {
  if (!TableInterleavesAny()) GTEST_SKIP() << "this table reads K-quant rows as they lie";
  std::mt19937 rng(7);
  ThreadPool pool(2);
  const int64_t n_cols = 512;
  const std::vector<float> x = RandomFloats(rng, 9 * n_cols);
  for (DType type : kInterleavable) {
    if (!TableInterleaves(type)) continue;
    QuantMatrix a = MakeMatrix(rng, type, 64, n_cols);
    QuantMatrix b = MakeMatrix(rng, DType::kQ4_K, 32, n_cols);
    const MatrixView wa = InterleaveRows(a.view, a.data.data());
    for (int64_t plain_tokens : {2, 9}) {
      SCOPED_TRACE(testing::Message() << tensor::DTypeName(type)
                                      << " interleaved, plain job's tokens " << plain_tokens);
      std::vector<float> ya(9 * 64), yb(plain_tokens * 32), want_a(ya.size()), want_b(yb.size());
      const MatMulJob jobs[] = {{wa, x.data(), 9, ya.data()},
                                {b.view, x.data(), plain_tokens, yb.data()}};
      MatMuls(jobs, &pool);
      MatMul(wa, x.data(), 9, want_a.data(), nullptr);
      MatMul(b.view, x.data(), plain_tokens, want_b.data(), nullptr);
      EXPECT_EQ(ya, want_a);
      EXPECT_EQ(yb, want_b);
    }
  }
}

// A one-token pass that also asks for its lines ahead computes the same thing: both kernels of a
// layout, called directly (MatMul takes the one the CPU gets), on one token and on one group.
TEST_P(InterleavedRowsTest, AskingForLinesChangesNoBits) {
  if (!TableInterleavesAny()) GTEST_SKIP() << "this table reads K-quant rows as they lie";
  std::mt19937 rng(8);
  for (DType type : kInterleavable) {
    if (!TableInterleaves(type)) continue;
    SCOPED_TRACE(tensor::DTypeName(type));
    const int64_t n_rows = 48, n_cols = 1280;
    QuantMatrix m = MakeMatrix(rng, type, n_rows, n_cols);
    const MatrixView w = InterleaveRows(m.view, m.data.data());
    const std::vector<float> x = RandomFloats(rng, n_cols);
    std::vector<tensor::BlockQ8_K> act(n_cols / tensor::kQK_K);
    internal::Table().quantize_q8_k(x.data(), n_cols, act.data());
    const internal::InterleavedPath path = internal::Table().interleaved(type);
    ASSERT_NE(path.tile_asking_for_lines, nullptr);
    const auto* act_bytes = reinterpret_cast<const uint8_t*>(act.data());
    const int64_t act_bytes_per_token = static_cast<int64_t>(act.size() * sizeof(act[0]));
    std::vector<float> via_matvec(n_rows);
    MatVec(w, x.data(), via_matvec.data(), nullptr);
    for (int64_t rows : {n_rows, int64_t{internal::kInterleavedRows}}) {
      std::vector<float> quiet(rows), asking(rows);
      path.tile(w.row(0), w.row_bytes, rows, n_cols, act_bytes, act_bytes_per_token, 1,
                quiet.data());
      path.tile_asking_for_lines(w.row(0), w.row_bytes, rows, n_cols, act_bytes,
                                 act_bytes_per_token, 1, asking.data());
      EXPECT_EQ(quiet, asking) << rows << " rows";
      EXPECT_TRUE(std::equal(quiet.begin(), quiet.end(), via_matvec.begin()));
    }
  }
}

TEST(InterleavedLineRequestsTest, OnIntelCpusOnly) {
  EXPECT_TRUE(internal::AsksForInterleavedLines("GenuineIntel"));
  EXPECT_FALSE(internal::AsksForInterleavedLines("AuthenticAMD"));
  EXPECT_FALSE(internal::AsksForInterleavedLines("HygonGenuine"));
  EXPECT_FALSE(internal::AsksForInterleavedLines(""));
}

DS_INSTANTIATE_FOR_EACH_ISA(InterleavedRowsTest);

}  // namespace
}  // namespace ds::kernels
