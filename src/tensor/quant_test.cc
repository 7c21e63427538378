// Round-trip accuracy and edge cases of QuantizeRow / DequantizeRow for every supported type.
// Layout bit-exactness is pinned separately, with hand-built blocks, in quant_layout_test.cc.
#include "tensor/quant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tensor/blocks.h"
#include "tensor/dtype.h"

namespace ds::tensor {
namespace {

// Bounds on RMS(decoded - x) / RMS(x) for rows of N(0, 1) values: `any_row` for rows of any length
// (one-block rows are the noisiest), `long_row` for rows of 64 blocks. Set from the worst of 20
// seeds per length (in the comments) plus 10-15% headroom.
struct TypeBound {
  DType type;
  double any_row;
  double long_row;
};
constexpr TypeBound kBounds[] = {
    {DType::kF32, 0.0, 0.0},          // exact
    {DType::kF16, 3.2e-4, 2.3e-4},    // 2.7e-4, 2.1e-4
    {DType::kBF16, 2.8e-3, 1.9e-3},   // 2.4e-3, 1.7e-3
    {DType::kQ8_0, 8.5e-3, 6.0e-3},   // 7.5e-3, 5.6e-3
    {DType::kQ8_K, 9.5e-3, 7.8e-3},   // 8.4e-3, 7.2e-3
    {DType::kQ6_K, 2.1e-2, 1.8e-2},   // 1.8e-2, 1.7e-2
    {DType::kQ5_0, 6.3e-2, 4.6e-2},   // 5.5e-2, 4.3e-2
    {DType::kQ5_1, 5.1e-2, 3.9e-2},   // 4.4e-2, 3.6e-2
    {DType::kQ5_K, 4.7e-2, 4.0e-2},   // 4.1e-2, 3.7e-2
    {DType::kQ4_0, 1.40e-1, 9.3e-2},  // 1.22e-1, 8.6e-2
    {DType::kQ4_1, 1.10e-1, 8.2e-2},  // 9.4e-2, 7.6e-2
    {DType::kQ4_K, 8.9e-2, 8.0e-2},   // 7.7e-2, 7.4e-2
    {DType::kQ3_K, 1.9e-1, 1.6e-1},   // 1.67e-1, 1.48e-1
    {DType::kQ2_K, 3.5e-1, 3.1e-1},   // 3.09e-1, 2.84e-1
};

std::vector<float> Gaussian(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = dist(rng);
  return x;
}

std::vector<uint8_t> Quantize(DType type, const std::vector<float>& x) {
  std::vector<uint8_t> bytes(static_cast<size_t>(RowBytes(type, static_cast<int64_t>(x.size()))));
  QuantizeRow(type, x.data(), bytes.data(), static_cast<int64_t>(x.size()));
  return bytes;
}

std::vector<float> Dequantize(DType type, const std::vector<uint8_t>& bytes, int64_t n) {
  std::vector<float> y(static_cast<size_t>(n));
  DequantizeRow(type, bytes.data(), y.data(), n);
  return y;
}

std::vector<float> RoundTrip(DType type, const std::vector<float>& x) {
  return Dequantize(type, Quantize(type, x), static_cast<int64_t>(x.size()));
}

double RelRms(const std::vector<float>& x, const std::vector<float>& y) {
  double err = 0.0, ref = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    err += (static_cast<double>(y[i]) - x[i]) * (static_cast<double>(y[i]) - x[i]);
    ref += static_cast<double>(x[i]) * x[i];
  }
  return std::sqrt(err / ref);
}

bool AllFinite(const std::vector<float>& y) {
  for (float v : y) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

// Row lengths of 1, 2, 7 and 64 blocks (a plain type counts 32 elements as a block here).
std::vector<int64_t> RowLengths(DType type) {
  const int64_t unit = Traits(type).block_elems == 1 ? 32 : Traits(type).block_elems;
  return {unit, 2 * unit, 7 * unit, 64 * unit};
}

class QuantRoundTripTest : public ::testing::TestWithParam<TypeBound> {};

TEST_P(QuantRoundTripTest, GaussianRowsStayWithinBound) {
  const TypeBound bound = GetParam();
  for (int64_t n : RowLengths(bound.type)) {
    for (uint32_t seed = 1; seed <= 3; ++seed) {
      const std::vector<float> x = Gaussian(n, seed * 7919u + static_cast<uint32_t>(n));
      const std::vector<float> y = RoundTrip(bound.type, x);
      ASSERT_TRUE(AllFinite(y));
      const bool is_long = n == RowLengths(bound.type).back();
      EXPECT_LE(RelRms(x, y), is_long ? bound.long_row : bound.any_row)
          << "n=" << n << " seed=" << seed;
    }
  }
}

TEST_P(QuantRoundTripTest, ScaledRowsKeepRelativeAccuracy) {
  // Block scales are halves: rows far from unit scale must not lose precision or overflow.
  const TypeBound bound = GetParam();
  const int64_t n = RowLengths(bound.type)[2];
  for (float scale : {1e-3f, 30.0f, 1000.0f}) {
    std::vector<float> x = Gaussian(n, 99);
    for (float& v : x) v *= scale;
    const std::vector<float> y = RoundTrip(bound.type, x);
    ASSERT_TRUE(AllFinite(y));
    EXPECT_LE(RelRms(x, y), bound.any_row * 1.05 + 1e-6) << "scale=" << scale;
  }
}

TEST_P(QuantRoundTripTest, AllZeroRowDecodesToZeros) {
  const DType type = GetParam().type;
  const int64_t n = RowLengths(type)[1];
  const std::vector<float> y = RoundTrip(type, std::vector<float>(static_cast<size_t>(n), 0.0f));
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[static_cast<size_t>(i)], 0.0f) << "i=" << i;
}

TEST_P(QuantRoundTripTest, SingleHugeValueSurvives) {
  const TypeBound bound = GetParam();
  const int64_t n = RowLengths(bound.type)[1];
  std::vector<float> x = Gaussian(n, 5);
  const size_t huge_at = static_cast<size_t>(n) / 2 + 3;
  x[huge_at] = 4000.0f;
  const std::vector<float> y = RoundTrip(bound.type, x);
  ASSERT_TRUE(AllFinite(y));
  // The huge element sets its block's scale, so it lands on (or next to) a level: only the half
  // rounding of the scales limits it (measured <= 4e-4 relative). The row is dominated by it.
  EXPECT_NEAR(y[huge_at], x[huge_at], 4000.0 * 2e-3);
  EXPECT_LE(RelRms(x, y), bound.any_row + 1e-6);
}

TEST_P(QuantRoundTripTest, NegativeOnlyAndPositiveOnlyRows) {
  const TypeBound bound = GetParam();
  const int64_t n = RowLengths(bound.type)[2];
  for (float sign : {-1.0f, 1.0f}) {
    std::vector<float> x = Gaussian(n, 11);
    for (float& v : x) v = sign * (std::fabs(v) + 0.25f);
    const std::vector<float> y = RoundTrip(bound.type, x);
    ASSERT_TRUE(AllFinite(y));
    // One-sided rows have a smaller spread relative to their RMS than Gaussian ones, so every
    // type does better (Q2_K measured 0.19 on positive rows, whose min is pinned at 0).
    EXPECT_LE(RelRms(x, y), bound.any_row + 1e-6) << "sign=" << sign;
  }
}

TEST_P(QuantRoundTripTest, WritesExactlyRowBytesAndIsDeterministic) {
  const DType type = GetParam().type;
  const int64_t n = RowLengths(type)[1];
  const std::vector<float> x = Gaussian(n, 3);
  const size_t row_bytes = static_cast<size_t>(RowBytes(type, n));
  std::vector<uint8_t> a(row_bytes + 16, 0xA5);
  std::vector<uint8_t> b(row_bytes + 16, 0x5A);
  QuantizeRow(type, x.data(), a.data(), n);
  QuantizeRow(type, x.data(), b.data(), n);
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), row_bytes));
  for (size_t i = row_bytes; i < a.size(); ++i) ASSERT_EQ(a[i], 0xA5) << "wrote past the row";
}

std::string TypeName(const ::testing::TestParamInfo<TypeBound>& info) {
  return std::string(DTypeName(info.param.type));
}

INSTANTIATE_TEST_SUITE_P(AllTypes, QuantRoundTripTest, ::testing::ValuesIn(kBounds), TypeName);

TEST(QuantTest, BlockStructSizesMatchDTypeTable) {
  EXPECT_EQ(sizeof(BlockQ4_0), static_cast<size_t>(Traits(DType::kQ4_0).block_bytes));
  EXPECT_EQ(sizeof(BlockQ4_1), static_cast<size_t>(Traits(DType::kQ4_1).block_bytes));
  EXPECT_EQ(sizeof(BlockQ5_0), static_cast<size_t>(Traits(DType::kQ5_0).block_bytes));
  EXPECT_EQ(sizeof(BlockQ5_1), static_cast<size_t>(Traits(DType::kQ5_1).block_bytes));
  EXPECT_EQ(sizeof(BlockQ8_0), static_cast<size_t>(Traits(DType::kQ8_0).block_bytes));
  EXPECT_EQ(sizeof(BlockQ2_K), static_cast<size_t>(Traits(DType::kQ2_K).block_bytes));
  EXPECT_EQ(sizeof(BlockQ3_K), static_cast<size_t>(Traits(DType::kQ3_K).block_bytes));
  EXPECT_EQ(sizeof(BlockQ4_K), static_cast<size_t>(Traits(DType::kQ4_K).block_bytes));
  EXPECT_EQ(sizeof(BlockQ5_K), static_cast<size_t>(Traits(DType::kQ5_K).block_bytes));
  EXPECT_EQ(sizeof(BlockQ6_K), static_cast<size_t>(Traits(DType::kQ6_K).block_bytes));
  EXPECT_EQ(sizeof(BlockQ8_K), static_cast<size_t>(Traits(DType::kQ8_K).block_bytes));
  for (DType t : {DType::kQ4_0, DType::kQ4_1, DType::kQ5_0, DType::kQ5_1, DType::kQ8_0}) {
    EXPECT_EQ(Traits(t).block_elems, kQK);
  }
  for (DType t :
       {DType::kQ2_K, DType::kQ3_K, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K, DType::kQ8_K}) {
    EXPECT_EQ(Traits(t).block_elems, kQK_K);
  }
}

// Values that a type represents exactly must survive another quantise/dequantise unchanged: the
// quantiser has to find again the very scales (and scale signs) that produced them.
TEST(QuantTest, RequantizingDecodedValuesIsExact) {
  for (const TypeBound& bound : kBounds) {
    for (uint32_t seed = 17; seed < 22; ++seed) {
      const std::vector<float> x = Gaussian(16 * 256, seed);
      const std::vector<float> once = RoundTrip(bound.type, x);
      const std::vector<float> twice = RoundTrip(bound.type, once);
      size_t mismatches = 0;
      for (size_t i = 0; i < x.size(); ++i) mismatches += (once[i] != twice[i]);
      EXPECT_EQ(mismatches, 0u) << DTypeName(bound.type) << " seed=" << seed;
    }
  }
}

TEST(QuantTest, Q8KBsumsAreSixteenElementSums) {
  const std::vector<float> x = Gaussian(2 * 256, 31);
  const std::vector<uint8_t> bytes = Quantize(DType::kQ8_K, x);
  for (int b = 0; b < 2; ++b) {
    BlockQ8_K blk;
    std::memcpy(&blk, bytes.data() + b * sizeof(BlockQ8_K), sizeof(blk));
    for (int g = 0; g < 16; ++g) {
      int sum = 0;
      for (int e = 16 * g; e < 16 * g + 16; ++e) sum += blk.qs[e];
      EXPECT_EQ(blk.bsums[g], sum) << "block " << b << " group " << g;
    }
  }
}

TEST(QuantTest, Q8KUsesTheFullInt8RangeWithAFloatScale) {
  std::vector<float> x = Gaussian(256, 37);
  x[10] = -9.5f;  // the absmax element must land on -127 exactly
  const std::vector<uint8_t> bytes = Quantize(DType::kQ8_K, x);
  BlockQ8_K blk;
  std::memcpy(&blk, bytes.data(), sizeof(blk));
  EXPECT_EQ(blk.qs[10], -127);
  EXPECT_EQ(blk.d, 9.5f / 127.0f);
}

}  // namespace
}  // namespace ds::tensor
