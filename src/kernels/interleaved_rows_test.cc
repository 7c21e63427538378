// Q4_K matrices with rows interleaved for the active table (InterleaveRows) under every ISA:
// which matrices qualify, and that the rewritten bytes multiply like the rows they came from
// (within the reference's tolerance, 2e-5 against int8-rounded activations as in matmul_test),
// each token with its bits alone, on any number of threads, alone or among other jobs.

#include <cstring>
#include <random>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/ref/ref.h"
#include "kernels/test_util.h"
#include "tensor/dtype.h"
#include "tensor/quant.h"

namespace ds::kernels {
namespace {

using tensor::DType;

// A Q4_K matrix quantised from random floats, the data its view reads, and a copy kept in rows.
struct Q4KMatrix {
  std::vector<uint8_t> data;
  std::vector<uint8_t> as_rows;
  MatrixView view;
  MatrixView rows_view;
};

Q4KMatrix MakeQ4K(std::mt19937& rng, int64_t n_rows, int64_t n_cols) {
  Q4KMatrix m;
  const int64_t row_bytes = tensor::RowBytes(DType::kQ4_K, n_cols);
  m.data.resize(static_cast<size_t>(n_rows * row_bytes));
  for (int64_t r = 0; r < n_rows; ++r) {
    const std::vector<float> row = RandomFloats(rng, n_cols);
    tensor::QuantizeRow(DType::kQ4_K, row.data(), m.data.data() + r * row_bytes, n_cols);
  }
  m.as_rows = m.data;
  m.view = {m.data.data(), DType::kQ4_K, n_rows, n_cols, row_bytes};
  m.rows_view = {m.as_rows.data(), DType::kQ4_K, n_rows, n_cols, row_bytes};
  return m;
}

bool TableInterleavesQ4K() { return internal::Table().interleave_q4_k != nullptr; }

class InterleavedRowsTest : public IsaTest {};

TEST_P(InterleavedRowsTest, OnlyWholeGroupsOfUnpaddedQ4KRowsQualify) {
  std::mt19937 rng(5);
  Q4KMatrix m = MakeQ4K(rng, 48, 512);
  EXPECT_EQ(CanInterleaveRows(m.view), TableInterleavesQ4K());
  MatrixView ragged = m.view;
  ragged.n_rows = 40;
  EXPECT_FALSE(CanInterleaveRows(ragged));
  MatrixView padded = m.view;
  padded.n_rows = 24;
  padded.row_bytes *= 2;
  EXPECT_FALSE(CanInterleaveRows(padded));
  MatrixView other = m.view;
  other.type = DType::kQ5_K;
  other.row_bytes = tensor::RowBytes(DType::kQ5_K, other.n_cols);
  EXPECT_FALSE(CanInterleaveRows(other));
  if (!TableInterleavesQ4K()) return;
  const MatrixView interleaved = InterleaveRows(m.view, m.data.data());
  EXPECT_TRUE(interleaved.interleaved);
  EXPECT_FALSE(CanInterleaveRows(interleaved));
  EXPECT_NE(m.data, m.as_rows);
}

TEST_P(InterleavedRowsTest, MultipliesLikeItsRowsWithEachTokensBitsAlone) {
  if (!TableInterleavesQ4K()) GTEST_SKIP() << "this table reads Q4_K rows as they lie";
  std::mt19937 rng(6);
  ThreadPool pool2(2), pool3(3);
  for (int64_t n_cols : {256, 512, 1280}) {
    const int64_t n_rows = 48;
    Q4KMatrix m = MakeQ4K(rng, n_rows, n_cols);
    const MatrixView w = InterleaveRows(m.view, m.data.data());
    for (int64_t n_tokens : {1, 2, 3, 4, 5, 8, 9, 17}) {
      SCOPED_TRACE(testing::Message() << "cols=" << n_cols << " tokens=" << n_tokens);
      const std::vector<float> x = RandomFloats(rng, n_tokens * n_cols);
      std::vector<float> y(static_cast<size_t>(n_tokens * n_rows)), exact(y.size());
      MatMul(w, x.data(), n_tokens, y.data(), &pool2);
      ref::MatMul(m.rows_view, AsKernelSeesIt(DType::kQ4_K, x, n_tokens, n_cols).data(), n_tokens,
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
        EXPECT_EQ(0, std::memcmp(single.data(), y.data() + t * n_rows, n_rows * sizeof(float)))
            << "token " << t;
      }
    }
  }
}

// Among jobs of rows as they lie (a layer's experts may be either), each job gets what MatMul
// gives it alone, also where both kinds read one encoding of the same tokens (which then has
// the tiles the plain rows take and the interleaved ones skip).
TEST_P(InterleavedRowsTest, MatMulsMixInterleavedAndPlainJobs) {
  if (!TableInterleavesQ4K()) GTEST_SKIP() << "this table reads Q4_K rows as they lie";
  std::mt19937 rng(7);
  ThreadPool pool(2);
  const int64_t n_cols = 512;
  Q4KMatrix a = MakeQ4K(rng, 64, n_cols), b = MakeQ4K(rng, 32, n_cols);
  const MatrixView wa = InterleaveRows(a.view, a.data.data());
  const std::vector<float> x = RandomFloats(rng, 9 * n_cols);
  for (int64_t plain_tokens : {2, 9}) {
    SCOPED_TRACE(testing::Message() << "plain job's tokens " << plain_tokens);
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

DS_INSTANTIATE_FOR_EACH_ISA(InterleavedRowsTest);

}  // namespace
}  // namespace ds::kernels
