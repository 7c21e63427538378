// Elementwise kernels, reductions, Rope and TopK under every supported ISA, against the scalar
// reference or hand-computed values. Tolerances (relative to the result's norm): 2e-6 for Dot,
// Axpy, RmsNorm; 1e-5 for Softmax, SwiGlu, Silu and SigmoidGate (polynomial exp, ~2e-7 per value).

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/ref/ref.h"
#include "kernels/test_util.h"

namespace ds::kernels {
namespace {

constexpr int64_t kLengths[] = {1,  2,  3,  7,  8,   15,  16,   17,  31,
                                33, 63, 64, 65, 100, 255, 1000, 4099};

class OpsTest : public IsaTest {};

TEST_P(OpsTest, DotAndAxpyMatchReference) {
  std::mt19937 rng(1);
  for (int64_t n : kLengths) {
    SCOPED_TRACE(n);
    std::vector<float> a = RandomFloats(rng, n + 1), b = RandomFloats(rng, n + 1);
    const float got = Dot(a.data() + 1, b.data() + 1, n);  // +1: off vector alignment
    const float want = ref::Dot(a.data() + 1, b.data() + 1, n);
    double norm = 0.0;
    for (int64_t i = 1; i <= n; ++i) norm += std::fabs(a[i] * b[i]);
    EXPECT_NEAR(got, want, 2e-6 * norm);

    std::vector<float> y = RandomFloats(rng, n + 1);
    std::vector<float> y_ref = y;
    Axpy(0.75f, a.data() + 1, n, y.data() + 1);
    ref::Axpy(0.75f, a.data() + 1, n, y_ref.data() + 1);
    EXPECT_LT(RelativeError(y.data(), y_ref.data(), n + 1), 2e-7);
    EXPECT_EQ(y[0], y_ref[0]);  // untouched
  }
  EXPECT_EQ(Dot(nullptr, nullptr, 0), 0.0f);
}

TEST_P(OpsTest, RmsNormMatchesReferenceInPlaceAndWithoutWeight) {
  std::mt19937 rng(2);
  for (int64_t n : kLengths) {
    SCOPED_TRACE(n);
    const std::vector<float> x = RandomFloats(rng, n, -3.0f, 3.0f);
    const std::vector<float> w = RandomFloats(rng, n, 0.5f, 1.5f);
    std::vector<float> want(n), got(n);
    ref::RmsNorm(x.data(), w.data(), n, 1e-6f, want.data());
    RmsNorm(x.data(), w.data(), n, 1e-6f, got.data());
    EXPECT_LT(RelativeError(got.data(), want.data(), n), 2e-6);

    std::vector<float> in_place = x;
    ref::RmsNorm(x.data(), nullptr, n, 1e-6f, want.data());
    RmsNorm(in_place.data(), nullptr, n, 1e-6f, in_place.data());
    EXPECT_LT(RelativeError(in_place.data(), want.data(), n), 2e-6);
  }
}

TEST_P(OpsTest, SwiGluMatchesReferenceIncludingSaturation) {
  std::mt19937 rng(3);
  for (int64_t n : kLengths) {
    SCOPED_TRACE(n);
    std::vector<float> gate = RandomFloats(rng, n, -12.0f, 12.0f);
    gate[0] = (n % 2) ? -200.0f : 200.0f;  // exp saturates either way
    const std::vector<float> up = RandomFloats(rng, n);
    std::vector<float> want(n), got(n);
    ref::SwiGlu(gate.data(), up.data(), n, want.data());
    SwiGlu(gate.data(), up.data(), n, got.data());
    EXPECT_LT(RelativeError(got.data(), want.data(), n), 1e-5);
    EXPECT_TRUE(std::isfinite(got[0]));
  }
}

// Runs op(x + 1, gates + 1, n) over random values and checks x[i] / (1 + e^-gates[i]) against
// double precision, with one exp saturating either way, and x[0] left as it was (the +1 puts the
// data off vector alignment). The gates are x itself where gates_are_x (SiLU).
template <class Op>
void ExpectDividedByOnePlusExp(std::mt19937& rng, bool gates_are_x, Op op) {
  for (int64_t n : kLengths) {
    SCOPED_TRACE(n);
    std::vector<float> x = RandomFloats(rng, n + 1, -12.0f, 12.0f);
    std::vector<float> gates = gates_are_x ? x : RandomFloats(rng, n + 1, -12.0f, 12.0f);
    gates[1] = (n % 2) ? -200.0f : 200.0f;
    if (gates_are_x) x[1] = gates[1];
    std::vector<float> want(n + 1);
    for (int64_t i = 0; i <= n; ++i) {
      want[i] = static_cast<float>(x[i] / (1.0 + std::exp(-static_cast<double>(gates[i]))));
    }
    want[0] = x[0];
    op(x.data() + 1, gates.data() + 1, n);
    EXPECT_LT(RelativeError(x.data(), want.data(), n + 1), 1e-5);
    EXPECT_TRUE(std::isfinite(x[1]));
    EXPECT_EQ(x[0], want[0]);
  }
}

TEST_P(OpsTest, SiluMatchesDoublePrecisionIncludingSaturation) {
  std::mt19937 rng(5);
  ExpectDividedByOnePlusExp(rng, true, [](float* x, const float*, int64_t n) { Silu(x, n); });
}

TEST_P(OpsTest, SigmoidGateMatchesDoublePrecisionIncludingSaturation) {
  std::mt19937 rng(6);
  ExpectDividedByOnePlusExp(rng, false, [](float* x, const float* gates, int64_t n) {
    SigmoidGate(x, gates, n);
  });
}

TEST_P(OpsTest, SoftmaxIsStableForLargeValuesAndMinusInfinity) {
  std::mt19937 rng(4);
  for (int64_t n : kLengths) {
    SCOPED_TRACE(n);
    std::vector<float> x = RandomFloats(rng, n, -20.0f, 20.0f);
    for (int64_t i = 0; i < n; i += 3) x[i] += 1e4f;  // would overflow exp without the max shift
    if (n > 1) x[1] = -std::numeric_limits<float>::infinity();
    std::vector<float> want = x;
    ref::Softmax(want.data(), n);
    Softmax(x.data(), n);
    EXPECT_LT(RelativeError(x.data(), want.data(), n), 1e-5);
    double sum = 0.0;
    for (float v : x) sum += v;
    EXPECT_NEAR(sum, 1.0, 1e-5);
    if (n > 1) {
      EXPECT_EQ(x[1], 0.0f);
    }
  }
}

TEST_P(OpsTest, SoftmaxOfEqualValuesIsUniform) {
  std::vector<float> x(37, 3e30f);
  Softmax(x.data(), 37);
  for (float v : x) EXPECT_NEAR(v, 1.0f / 37, 1e-7);
}

// The burn behind the measured FMA peak runs kFmaBurnChains chains from distinct starts: its sum
// is each chain's closed form, v after r rounds = 1 + (start - 1) * m^r, which chains folded
// into one (as equal starts once were, by the compiler) would miss.
TEST_P(OpsTest, FmaBurnRunsEveryChainFromItsOwnStart) {
  const internal::KernelTable& table = internal::Table();
  constexpr int64_t kRounds = 1000;
  double want = 0;
  for (int c = 0; c < internal::kFmaBurnChains; ++c) {
    for (int other = 0; other < c; ++other) {
      EXPECT_NE(internal::FmaBurnChainStart(c), internal::FmaBurnChainStart(other));
    }
    const double start = internal::FmaBurnChainStart(c);
    want += table.fma_lanes * (1.0 + (start - 1.0) * std::pow(0.9999999, kRounds));
  }
  EXPECT_NEAR(table.fma_burn(kRounds), want, 1e-4 * want);
}

// The int8 burn behind the measured dot-product peak multiplies codes of 1 in every lane of every
// chain: its sum counts the multiply-adds the peak is computed from.
TEST_P(OpsTest, DotBurnCountsItsMultiplyAdds) {
  const internal::KernelTable& table = internal::Table();
  if (table.dot_burn == nullptr) {
    EXPECT_EQ(MeasureInt8DotPeakGops(nullptr), 0.0);
    return;
  }
  EXPECT_GE(table.dot_burn_macs, 16);
  for (int64_t rounds : {1, 1000}) EXPECT_EQ(table.dot_burn(rounds), rounds * table.dot_burn_macs);
}

DS_INSTANTIATE_FOR_EACH_ISA(OpsTest);

class TopKTest : public IsaTest {};

TEST_P(TopKTest, LargestFirstWithTiesByLowerIndex) {
  const std::vector<float> x = {1.0f, 5.0f, 3.0f, 5.0f, -2.0f, 3.0f, 5.0f};
  std::vector<int32_t> idx(5);
  TopK(x.data(), 7, 5, idx.data());
  EXPECT_EQ(idx, (std::vector<int32_t>{1, 3, 6, 2, 5}));
  TopK(x.data(), 7, 0, idx.data());  // k = 0 writes nothing and must not crash
  std::vector<int32_t> all(7);
  TopK(x.data(), 7, 7, all.data());
  EXPECT_EQ(all, (std::vector<int32_t>{1, 3, 6, 2, 5, 0, 4}));
}

// Heavy ties, masked (-inf) entries, tails past the last full vector, and k from 1 to n.
TEST_P(TopKTest, MatchesReferenceOnEveryShape) {
  std::mt19937 rng(7);
  for (int64_t n : {5, 33, 1000, 5003}) {
    std::vector<float> x(n);
    for (float& v : x) v = static_cast<float>(rng() % 50);
    for (int64_t i = 0; i < n; i += 7) x[i] = -std::numeric_limits<float>::infinity();
    for (int64_t k : {int64_t{1}, int64_t{4}, int64_t{40}, n / 2, n}) {
      if (k > n) continue;
      std::vector<int32_t> got(k), want(k);
      TopK(x.data(), n, k, got.data());
      ref::TopK(x.data(), n, k, want.data());
      EXPECT_EQ(got, want) << "n " << n << " k " << k;
    }
  }
}

DS_INSTANTIATE_FOR_EACH_ISA(TopKTest);

// Rope against values worked out by hand from the definition theta_i = pos * base^(-2i / n_rot).
TEST(RopeValuesTest, NormRotatesAdjacentPairs) {
  std::vector<float> x = {1, 2, 3, 4};
  Rope(x.data(), 1, 4, 4, 1, 10000.0f, RopeStyle::kNorm);
  const double t0 = 1.0, t1 = 0.01;  // 10000^(-2/4) = 0.01
  EXPECT_NEAR(x[0], 1 * std::cos(t0) - 2 * std::sin(t0), 1e-6);
  EXPECT_NEAR(x[1], 1 * std::sin(t0) + 2 * std::cos(t0), 1e-6);
  EXPECT_NEAR(x[2], 3 * std::cos(t1) - 4 * std::sin(t1), 1e-6);
  EXPECT_NEAR(x[3], 3 * std::sin(t1) + 4 * std::cos(t1), 1e-6);
}

TEST(RopeValuesTest, NeoxRotatesHalvesAndLeavesDimsPastNRot) {
  // Two heads of head_dim 6, n_rot 4: pairs (0, 2) and (1, 3); dims 4 and 5 untouched.
  std::vector<float> x = {1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6};
  Rope(x.data(), 2, 6, 4, 3, 100.0f, RopeStyle::kNeox);
  const double t0 = 3.0, t1 = 3.0 * 0.1;  // 100^(-2/4) = 0.1
  for (int h = 0; h < 2; ++h) {
    const double s = h == 0 ? 1.0 : -1.0;
    const float* head = x.data() + 6 * h;
    EXPECT_NEAR(head[0], s * (1 * std::cos(t0) - 3 * std::sin(t0)), 1e-5);
    EXPECT_NEAR(head[2], s * (1 * std::sin(t0) + 3 * std::cos(t0)), 1e-5);
    EXPECT_NEAR(head[1], s * (2 * std::cos(t1) - 4 * std::sin(t1)), 1e-5);
    EXPECT_NEAR(head[3], s * (2 * std::sin(t1) + 4 * std::cos(t1)), 1e-5);
    EXPECT_EQ(head[4], s * 5);
    EXPECT_EQ(head[5], s * 6);
  }
}

class RopeTest : public IsaTest {};

// Every path against the reference, over head sizes and rotary widths that leave vector tails.
TEST_P(RopeTest, PositionZeroIsIdentityAndEveryShapeMatchesReference) {
  std::mt19937 rng(8);
  for (RopeStyle style : {RopeStyle::kNorm, RopeStyle::kNeox}) {
    for (int64_t head_dim : {4, 18, 64, 128}) {
      for (int64_t n_rot : {int64_t{2}, head_dim / 2 / 2 * 2, head_dim}) {
        SCOPED_TRACE("head_dim " + std::to_string(head_dim) + " n_rot " + std::to_string(n_rot));
        const std::vector<float> x = RandomFloats(rng, 3 * head_dim);
        std::vector<float> same = x;
        Rope(same.data(), 3, head_dim, n_rot, 0, 1e6f, style);
        EXPECT_EQ(same, x);
        for (int64_t pos : {1, 17, 4095, 262143}) {
          std::vector<float> got = x, want = x;
          Rope(got.data(), 3, head_dim, n_rot, pos, 1e7f, style);
          ref::Rope(want.data(), 3, head_dim, n_rot, pos, 1e7f, style);
          EXPECT_LT(RelativeError(got.data(), want.data(), got.size()), 1e-6) << pos;
          for (int64_t h = 0; h < 3; ++h) {
            for (int64_t d = n_rot; d < head_dim; ++d) {
              EXPECT_EQ(got[h * head_dim + d], x[h * head_dim + d]) << "dim past n_rot";
            }
          }
        }
      }
    }
  }
}

// Rope keeps its last position's factors for the next call: a call that differs from the one
// before in any one input (position, width, base, style) gets its own, and a repeated one the
// same rotation as a fresh one.
TEST_P(RopeTest, EachCallRotatesByItsOwnInputsWhateverCameBefore) {
  std::mt19937 rng(9);
  const std::vector<float> x = RandomFloats(rng, 2 * 64);
  const auto rotated = [&](int64_t n_rot, int64_t pos, float base, RopeStyle style) {
    std::vector<float> got = x;
    Rope(got.data(), 2, 64, n_rot, pos, base, style);
    return got;
  };
  const auto fresh = [&](int64_t n_rot, int64_t pos, float base, RopeStyle style) {
    std::vector<float> want = x;
    ref::Rope(want.data(), 2, 64, n_rot, pos, base, style);
    return want;
  };
  const std::vector<float> first = rotated(32, 7, 1e4f, RopeStyle::kNeox);
  EXPECT_EQ(rotated(32, 7, 1e4f, RopeStyle::kNeox), first);
  struct Call {
    int64_t n_rot, pos;
    float base;
    RopeStyle style;
  };
  for (const Call& c : {Call{32, 8, 1e4f, RopeStyle::kNeox}, Call{64, 8, 1e4f, RopeStyle::kNeox},
                        Call{64, 8, 1e6f, RopeStyle::kNeox}, Call{64, 8, 1e6f, RopeStyle::kNorm},
                        Call{32, 7, 1e4f, RopeStyle::kNeox}}) {
    const std::vector<float> got = rotated(c.n_rot, c.pos, c.base, c.style);
    const std::vector<float> want = fresh(c.n_rot, c.pos, c.base, c.style);
    EXPECT_LT(RelativeError(got.data(), want.data(), got.size()), 1e-6)
        << c.n_rot << " " << c.pos << " " << c.base;
  }
  EXPECT_EQ(rotated(32, 7, 1e4f, RopeStyle::kNeox), first);
}

DS_INSTANTIATE_FOR_EACH_ISA(RopeTest);

}  // namespace
}  // namespace ds::kernels
