#include "kernels/gated_delta.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/ref/gated_delta_ref.h"

namespace ds::kernels {
namespace {

// Relative error of the kernels against the double reference: max abs diff / max abs value.
constexpr double kDeltaTolerance = 1e-4;
constexpr double kConvTolerance = 1e-5;

struct Dims {
  int64_t num_k_heads;
  int64_t num_v_heads;
  int64_t head_dim_k;
  int64_t head_dim_v;
  KeyHeadMapping mapping;

  int64_t StateSize() const { return num_v_heads * head_dim_k * head_dim_v; }
  int64_t OutRowSize() const { return num_v_heads * head_dim_v; }
};

// Inputs laid out as the model has them: one conv-output row per token holding [q | k | v], plus
// 3 floats of padding so rows are not vector-aligned.
struct DeltaInputs {
  Dims dims;
  int64_t n_tokens = 0;
  int64_t row_stride = 0;
  std::vector<float> qkv;   // [n_tokens][row_stride]
  std::vector<float> g;     // [n_tokens][num_v_heads]
  std::vector<float> beta;  // [n_tokens][num_v_heads]

  // Arguments for tokens [t0, t0 + count); out points at the outputs of token t0.
  GatedDeltaArgs Args(int64_t t0, int64_t count, float* state, float* out) const {
    GatedDeltaArgs a;
    a.q = qkv.data() + t0 * row_stride;
    a.k = a.q + dims.num_k_heads * dims.head_dim_k;
    a.v = a.k + dims.num_k_heads * dims.head_dim_k;
    a.g = g.data() + t0 * dims.num_v_heads;
    a.beta = beta.data() + t0 * dims.num_v_heads;
    a.q_stride = a.k_stride = a.v_stride = row_stride;
    a.n_tokens = count;
    a.num_k_heads = dims.num_k_heads;
    a.num_v_heads = dims.num_v_heads;
    a.head_dim_k = dims.head_dim_k;
    a.head_dim_v = dims.head_dim_v;
    a.mapping = dims.mapping;
    a.state = state;
    a.out = out;
    return a;
  }
};

// Normalised q (scaled by 1/sqrt(dk)) and k, g = -softplus(x) in [-3, 0), beta in (0, 1).
DeltaInputs MakeInputs(const Dims& d, int64_t n_tokens, uint32_t seed) {
  DeltaInputs in;
  in.dims = d;
  in.n_tokens = n_tokens;
  const int64_t key_dim = d.num_k_heads * d.head_dim_k;
  in.row_stride = 2 * key_dim + d.num_v_heads * d.head_dim_v + 3;
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> gate_logit(-5.0f, 2.9f);
  in.qkv.resize(n_tokens * in.row_stride);
  for (float& x : in.qkv) x = normal(rng);
  const float q_scale = 1.0f / std::sqrt(static_cast<float>(d.head_dim_k));
  for (int64_t t = 0; t < n_tokens; ++t) {
    float* row = in.qkv.data() + t * in.row_stride;
    L2NormalizeHeads(row, d.num_k_heads, d.head_dim_k, 1e-6f, q_scale);
    L2NormalizeHeads(row + key_dim, d.num_k_heads, d.head_dim_k, 1e-6f, 1.0f);
  }
  in.g.resize(n_tokens * d.num_v_heads);
  in.beta.resize(n_tokens * d.num_v_heads);
  for (float& g : in.g) g = -Softplus(gate_logit(rng));
  for (float& b : in.beta) b = Sigmoid(normal(rng));
  return in;
}

std::vector<float> RandomState(const Dims& d, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.5f);
  std::vector<float> s(d.StateSize());
  for (float& x : s) x = normal(rng);
  return s;
}

// Infinite where the kernel left a value unwritten (the outputs start as NaN) or overflowed.
double RelativeError(const std::vector<float>& got, const std::vector<double>& want) {
  EXPECT_EQ(got.size(), want.size());
  double max_diff = 0.0;
  double max_abs = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    max_diff = std::max(max_diff, std::fabs(got[i] - want[i]));
    max_abs = std::max(max_abs, std::fabs(want[i]));
  }
  return max_abs == 0.0 ? max_diff : max_diff / max_abs;
}

struct RunResult {
  std::vector<float> out;    // [n_tokens][num_v_heads][head_dim_v]
  std::vector<float> state;  // final
};

// Runs tokens [0, ends.back()) in pieces [previous end, end), each continuing from the state the
// previous one left.
RunResult RunPieces(const DeltaInputs& in, const std::vector<int64_t>& ends,
                    std::vector<float> state, ThreadPool* pool = nullptr) {
  RunResult r;
  r.out.assign(ends.back() * in.dims.OutRowSize(), std::nanf(""));
  int64_t begin = 0;
  for (int64_t end : ends) {
    GatedDeltaRecurrent(
        in.Args(begin, end - begin, state.data(), r.out.data() + begin * in.dims.OutRowSize()),
        pool);
    begin = end;
  }
  r.state = std::move(state);
  return r;
}

struct RefResult {
  std::vector<double> out;
  std::vector<double> state;
};

RefResult RunReference(const DeltaInputs& in, int64_t n_tokens, const std::vector<float>& state) {
  RefResult r;
  r.state.assign(state.begin(), state.end());
  r.out.resize(n_tokens * in.dims.OutRowSize());
  ref::GatedDeltaRef(in.Args(0, n_tokens, nullptr, nullptr), r.state.data(), r.out.data());
  return r;
}

void ExpectNear(const RunResult& got, const RefResult& want, const std::string& what) {
  EXPECT_LT(RelativeError(got.out, want.out), kDeltaTolerance) << what << " outputs";
  EXPECT_LT(RelativeError(got.state, want.state), kDeltaTolerance) << what << " state";
}

class GatedDeltaMappingTest : public ::testing::TestWithParam<KeyHeadMapping> {};

// Every length 1..300 from a zero state against the reference.
TEST_P(GatedDeltaMappingTest, EveryLengthMatchesReference) {
  const Dims d{2, 4, 16, 16, GetParam()};
  constexpr int64_t kMaxTokens = 300;
  const DeltaInputs in = MakeInputs(d, kMaxTokens, 1);
  // The reference one token at a time, keeping the state after every prefix.
  std::vector<std::vector<double>> ref_states;
  std::vector<double> ref_out(kMaxTokens * d.OutRowSize());
  std::vector<double> ref_state(d.StateSize(), 0.0);
  for (int64_t t = 0; t < kMaxTokens; ++t) {
    ref::GatedDeltaRef(in.Args(t, 1, nullptr, nullptr), ref_state.data(),
                       ref_out.data() + t * d.OutRowSize());
    ref_states.push_back(ref_state);
  }
  const std::vector<float> zero(d.StateSize(), 0.0f);
  for (int64_t n = 1; n <= kMaxTokens; ++n) {
    RefResult want;
    want.out.assign(ref_out.begin(), ref_out.begin() + n * d.OutRowSize());
    want.state = ref_states[n - 1];
    ExpectNear(RunPieces(in, {n}, zero), want, "n=" + std::to_string(n));
    if (HasFailure()) break;
  }
}

// A sequence split into random pieces, from a non-zero incoming state, gives the reference's
// result and exactly the bits of one run: a prompt prefilled in any chunks, or token by token as
// decode runs it, leaves the same state.
TEST_P(GatedDeltaMappingTest, RandomSplitsGiveTheBitsOfOneRun) {
  const Dims d{2, 4, 16, 16, GetParam()};
  std::mt19937 rng(7);
  for (int trial = 0; trial < 24; ++trial) {
    const int64_t n = std::uniform_int_distribution<int64_t>(2, 300)(rng);
    const DeltaInputs in = MakeInputs(d, n, 100 + trial);
    const std::vector<float> init = RandomState(d, 200 + trial);
    // The first trial goes token by token, as decode does; the others take random pieces
    // shorter than the sequence.
    std::vector<int64_t> ends;
    const int64_t longest = trial == 0 ? 1 : std::min<int64_t>(100, n - 1);
    while (ends.empty() || ends.back() < n) {
      const int64_t last = ends.empty() ? 0 : ends.back();
      ends.push_back(std::min(n, last + std::uniform_int_distribution<int64_t>(1, longest)(rng)));
    }
    const std::string what = "trial " + std::to_string(trial) + " n=" + std::to_string(n);
    const RunResult pieces = RunPieces(in, ends, init);
    const RunResult whole = RunPieces(in, {n}, init);
    ExpectNear(pieces, RunReference(in, n, init), what);
    EXPECT_EQ(pieces.out, whole.out) << what;
    EXPECT_EQ(pieces.state, whole.state) << what;
  }
}

// Model-sized heads: dk = dv = 64 over 130 tokens.
TEST_P(GatedDeltaMappingTest, HeadDim64MatchesReference) {
  const Dims d{2, 4, 64, 64, GetParam()};
  const DeltaInputs in = MakeInputs(d, 130, 11);
  const std::vector<float> init = RandomState(d, 12);
  ExpectNear(RunPieces(in, {130}, init), RunReference(in, 130, init), "dk = dv = 64");
}

// dk != dv, three value heads per key head, and head sizes that leave a partial register tile
// of columns (dv % 8) and of rows (dk % 4).
TEST_P(GatedDeltaMappingTest, UnequalHeadDimsMatchReference) {
  const Dims d{2, 6, 22, 44, GetParam()};
  const DeltaInputs in = MakeInputs(d, 150, 21);
  const std::vector<float> init = RandomState(d, 22);
  ExpectNear(RunPieces(in, {150}, init), RunReference(in, 150, init), "dk 22, dv 44");
}

INSTANTIATE_TEST_SUITE_P(Mappings, GatedDeltaMappingTest,
                         ::testing::Values(KeyHeadMapping::kTiled, KeyHeadMapping::kGrouped),
                         [](const ::testing::TestParamInfo<KeyHeadMapping>& info) {
                           return info.param == KeyHeadMapping::kTiled ? "Tiled" : "Grouped";
                         });

TEST(GatedDeltaTest, KeyHeadMapping) {
  // Hk = 2, Hv = 6: tiled 0 1 0 1 0 1, grouped 0 0 0 1 1 1.
  const int64_t tiled[] = {0, 1, 0, 1, 0, 1};
  const int64_t grouped[] = {0, 0, 0, 1, 1, 1};
  for (int64_t h = 0; h < 6; ++h) {
    EXPECT_EQ(KeyHeadFor(h, 2, 6, KeyHeadMapping::kTiled), tiled[h]);
    EXPECT_EQ(KeyHeadFor(h, 2, 6, KeyHeadMapping::kGrouped), grouped[h]);
  }
}

TEST(GatedDeltaTest, ThreadCountDoesNotChangeResults) {
  const Dims d{2, 6, 32, 32, KeyHeadMapping::kTiled};
  const DeltaInputs in = MakeInputs(d, 100, 31);
  const std::vector<float> init = RandomState(d, 32);
  ThreadPool pool(3);
  const RunResult serial = RunPieces(in, {100}, init, nullptr);
  const RunResult threaded = RunPieces(in, {100}, init, &pool);
  EXPECT_EQ(serial.out, threaded.out);
  EXPECT_EQ(serial.state, threaded.state);
}

TEST(GatedDeltaTest, ZeroTokensLeavesStateAlone) {
  const Dims d{1, 2, 8, 8, KeyHeadMapping::kTiled};
  const DeltaInputs in = MakeInputs(d, 1, 41);
  std::vector<float> state = RandomState(d, 42);
  const std::vector<float> before = state;
  std::vector<float> out(d.OutRowSize(), 0.0f);
  GatedDeltaRecurrent(in.Args(0, 0, state.data(), out.data()), nullptr);
  EXPECT_EQ(state, before);
}

// ---------------------------------------------------------------------------------------------
// Causal conv1d

struct ConvCase {
  int64_t n_tokens;
  int64_t channels;
  int64_t kernel_size;
  std::vector<float> x;  // [n_tokens][channels]
  std::vector<float> w;         // [channels][kernel_size], as GGUF stores it (the reference's)
  std::vector<float> w_by_tap;  // [kernel_size][channels], as CausalConv1dSilu takes it
};

ConvCase MakeConvCase(int64_t n_tokens, int64_t channels, int64_t kernel_size, uint32_t seed) {
  ConvCase c{n_tokens, channels, kernel_size, {}, {}, {}};
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  c.x.resize(n_tokens * channels);
  c.w.resize(channels * kernel_size);
  for (float& v : c.x) v = normal(rng);
  for (float& v : c.w) v = 0.5f * normal(rng);
  c.w_by_tap.resize(c.w.size());
  for (int64_t ch = 0; ch < channels; ++ch) {
    for (int64_t i = 0; i < kernel_size; ++i) {
      c.w_by_tap[i * channels + ch] = c.w[ch * kernel_size + i];
    }
  }
  return c;
}

// Runs the conv over the tokens split at `cuts` (ascending, inside (0, n_tokens)), each part over
// the channels split at `channel_cuts` (multiples of kConvChannelAlign inside (0, channels)),
// those ranges last to first, as a pass's tasks may finish.
RunResult RunConv(const ConvCase& c, const std::vector<int64_t>& cuts,
                  const std::vector<int64_t>& channel_cuts = {}) {
  RunResult r;
  r.state.assign((c.kernel_size - 1) * c.channels, 0.0f);
  r.out.assign(c.n_tokens * c.channels, std::nanf(""));
  std::vector<int64_t> bounds = cuts;
  bounds.push_back(c.n_tokens);
  std::vector<int64_t> channel_bounds = {0};
  channel_bounds.insert(channel_bounds.end(), channel_cuts.begin(), channel_cuts.end());
  channel_bounds.push_back(c.channels);
  int64_t begin = 0;
  for (int64_t end : bounds) {
    for (size_t i = channel_bounds.size() - 1; i-- > 0;) {
      CausalConv1dSilu(c.x.data() + begin * c.channels, end - begin, c.channels,
                       c.w_by_tap.data(), c.kernel_size, r.state.data(),
                       r.out.data() + begin * c.channels, channel_bounds[i], channel_bounds[i + 1]);
    }
    begin = end;
  }
  return r;
}

TEST(CausalConv1dTest, MatchesReferenceForEveryKernelSize) {
  for (int64_t kernel_size = 1; kernel_size <= kMaxConvKernelSize; ++kernel_size) {
    const ConvCase c = MakeConvCase(37, 150, kernel_size, 50 + kernel_size);
    const RunResult got = RunConv(c, {});
    std::vector<double> state((kernel_size - 1) * c.channels, 0.0);
    std::vector<double> out(c.n_tokens * c.channels);
    ref::CausalConv1dSiluRef(c.x.data(), c.n_tokens, c.channels, c.w.data(), kernel_size,
                             state.data(), out.data());
    EXPECT_LT(RelativeError(got.out, out), kConvTolerance) << "K=" << kernel_size;
    EXPECT_LT(RelativeError(got.state, state), kConvTolerance) << "K=" << kernel_size;
  }
}

// Any split of the tokens, of the channels (as the projection's tasks run it) and running in
// place give bit-identical results; a range must start at a multiple of kConvChannelAlign.
TEST(CausalConv1dTest, SplitsAndInPlaceAreBitIdentical) {
  const ConvCase c = MakeConvCase(40, 3 * kConvChannelAlign + 8, 4, 60);
  const RunResult whole = RunConv(c, {});
  const std::vector<std::vector<int64_t>> splits = {{1}, {2}, {3}, {1, 2, 3, 4}, {5, 17, 18, 39},
                                                    {20}};
  for (const std::vector<int64_t>& cuts : splits) {
    for (const std::vector<int64_t>& channel_cuts :
         std::vector<std::vector<int64_t>>{{}, {kConvChannelAlign, 3 * kConvChannelAlign}}) {
      const RunResult split = RunConv(c, cuts, channel_cuts);
      EXPECT_EQ(split.out, whole.out) << "first cut " << cuts[0];
      EXPECT_EQ(split.state, whole.state) << "first cut " << cuts[0];
    }
  }
  std::vector<float> in_place = c.x;
  std::vector<float> state(3 * c.channels, 0.0f);
  CausalConv1dSilu(in_place.data(), 25, c.channels, c.w_by_tap.data(), 4, state.data(),
                   in_place.data(), 0, c.channels);
  CausalConv1dSilu(in_place.data() + 25 * c.channels, 15, c.channels, c.w_by_tap.data(), 4,
                   state.data(), in_place.data() + 25 * c.channels, 0, c.channels);
  EXPECT_EQ(in_place, whole.out);
  EXPECT_EQ(state, whole.state);
  EXPECT_DEATH(CausalConv1dSilu(in_place.data(), 1, c.channels, c.w_by_tap.data(), 4,
                                state.data(), in_place.data(), 1, 2),
               "");
}

// The state holds the last K-1 inputs even when a call has fewer than K-1 tokens.
TEST(CausalConv1dTest, StateKeepsLastInputs) {
  const ConvCase c = MakeConvCase(5, 3, 4, 70);
  const RunResult r = RunConv(c, {1, 2, 3, 4});
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t ch = 0; ch < 3; ++ch) {
      EXPECT_EQ(r.state[i * 3 + ch], c.x[(2 + i) * 3 + ch]);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers

TEST(GatedDeltaHelpersTest, L2NormalizeHeads) {
  std::vector<float> x = {3.0f, 4.0f, 0.0f, 0.0f, 1e-9f, 0.0f};
  L2NormalizeHeads(x.data(), 3, 2, 1e-6f, 0.5f);
  EXPECT_FLOAT_EQ(x[0], 0.3f);
  EXPECT_FLOAT_EQ(x[1], 0.4f);
  EXPECT_EQ(x[2], 0.0f);  // a zero head stays zero instead of dividing by zero
  EXPECT_EQ(x[3], 0.0f);
  EXPECT_FLOAT_EQ(x[4], 1e-9f * 0.5f / 1e-6f);  // below eps the norm is clamped to eps
}

TEST(GatedDeltaHelpersTest, GatedRmsNorm) {
  const int64_t n_heads = 3;
  const int64_t dim = 5;
  std::mt19937 rng(80);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> o(n_heads * dim), z(n_heads * dim), w(dim);
  for (float& v : o) v = normal(rng);
  for (float& v : z) v = normal(rng);
  for (float& v : w) v = normal(rng);
  std::vector<float> got = o;
  GatedRmsNorm(got.data(), z.data(), w.data(), n_heads, dim, 1e-6f);
  for (int64_t h = 0; h < n_heads; ++h) {
    double sum_sq = 0.0;
    for (int64_t i = 0; i < dim; ++i) sum_sq += double(o[h * dim + i]) * o[h * dim + i];
    const double inv_rms = 1.0 / std::sqrt(sum_sq / dim + 1e-6);
    for (int64_t i = 0; i < dim; ++i) {
      const double zi = z[h * dim + i];
      const double want = o[h * dim + i] * inv_rms * w[i] * zi / (1.0 + std::exp(-zi));
      EXPECT_NEAR(got[h * dim + i], want, 1e-5 * std::max(1.0, std::fabs(want)));
    }
  }
}

TEST(GatedDeltaHelpersTest, SoftplusAndSigmoid) {
  EXPECT_FLOAT_EQ(Softplus(0.0f), std::log(2.0f));
  EXPECT_FLOAT_EQ(Softplus(100.0f), 100.0f);            // no overflow
  EXPECT_FLOAT_EQ(Softplus(-30.0f), std::exp(-30.0f));  // no cancellation to 0
  EXPECT_FLOAT_EQ(Softplus(1.5f), std::log1p(std::exp(1.5f)));
  EXPECT_FLOAT_EQ(Sigmoid(0.0f), 0.5f);
  EXPECT_FLOAT_EQ(Sigmoid(2.0f), 1.0f / (1.0f + std::exp(-2.0f)));
  EXPECT_EQ(Sigmoid(-200.0f), 0.0f);
  EXPECT_EQ(Sigmoid(200.0f), 1.0f);
}

}  // namespace
}  // namespace ds::kernels
