// Attention under every supported ISA against a naive double-precision implementation
// (ref::Attention), with GQA. Tolerance: 1e-5 of the output's norm (ToleranceOver).

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <random>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/kernels.h"
#include "kernels/ref/ref.h"
#include "kernels/test_util.h"
#include "tensor/dtype.h"
#include "tensor/quant.h"
#include "tensor/value_spans.h"

namespace ds::kernels {
namespace {

struct AttentionCase {
  std::vector<float> q, k, v;
  AttentionArgs args;
};

AttentionCase MakeCase(std::mt19937& rng, int64_t n_tokens, int64_t first_pos, int64_t head_dim,
                       int64_t n_heads, int64_t n_kv_heads) {
  AttentionCase c;
  const int64_t n_pos = first_pos + n_tokens;
  c.q = RandomFloats(rng, n_tokens * n_heads * head_dim, -2.0f, 2.0f);
  c.k = RandomFloats(rng, n_pos * n_kv_heads * head_dim, -2.0f, 2.0f);
  c.v = RandomFloats(rng, n_pos * n_kv_heads * head_dim);
  c.args.q = c.q.data();
  c.args.k_cache = c.k.data();
  c.args.v_cache = c.v.data();
  c.args.n_tokens = n_tokens;
  c.args.n_heads = n_heads;
  c.args.n_kv_heads = n_kv_heads;
  c.args.head_dim = head_dim;
  c.args.first_pos = first_pos;
  c.args.scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  return c;
}

// How a case's cache holds K and V: as rows, or K in tiles and V in spans (what the tables that
// take them in integers read), or one of each.
struct KvLayout {
  bool k_tiles, v_spans;
};
constexpr KvLayout kRows{false, false}, kTilesAndSpans{true, true};

void UseLayout(const KvLayout& layout, AttentionArgs* args) {
  args->k_tiles_wanted = layout.k_tiles;
  args->v_spans_wanted = layout.v_spans;
}

// How a case's cache holds K and V.
struct CacheDtypes {
  tensor::DType key, value;
};
constexpr CacheDtypes kF32Cache{tensor::DType::kF32, tensor::DType::kF32};
constexpr CacheDtypes kQ8Cache{tensor::DType::kQ8_0, tensor::DType::kQ8_0};
constexpr CacheDtypes kQ4ValueCache{tensor::DType::kQ8_0, tensor::DType::kQ4_0};

// The case's K and V as a cache of `dtypes` rows keeps them (K tiled, V in spans where their
// shapes are), and the rows as they went in.
struct StoredKv {
  std::vector<uint8_t> k, v, k_rows, v_rows;
  // Points args at this cache.
  void UseIn(AttentionArgs* args) const {
    args->k_cache = k.data();
    args->v_cache = v.data();
  }
};
StoredKv StoreKv(const AttentionCase& c, CacheDtypes dtypes) {
  const int64_t row = c.args.n_kv_heads * c.args.head_dim;
  const int64_t n_rows = c.args.first_pos + c.args.n_tokens;
  const tensor::KeyShape key_shape{dtypes.key, c.args.n_kv_heads, c.args.head_dim,
                                   c.args.k_tiles_wanted};
  const tensor::ValueShape value_shape{dtypes.value, c.args.n_kv_heads, c.args.head_dim,
                                       c.args.v_spans_wanted};
  StoredKv stored;
  stored.k.resize(key_shape.CacheBytes(n_rows));
  stored.v.resize(value_shape.CacheBytes(n_rows));
  stored.k_rows.resize(n_rows * tensor::RowBytes(dtypes.key, row));
  stored.v_rows.resize(n_rows * tensor::RowBytes(dtypes.value, row));
  StoreKeyRows(c.k.data(), 0, n_rows, key_shape, stored.k.data());
  StoreValueRows(c.v.data(), 0, n_rows, value_shape, stored.v.data());
  tensor::GetKeyRows(stored.k.data(), 0, n_rows, key_shape, stored.k_rows.data());
  tensor::GetValueRows(stored.v.data(), 0, n_rows, value_shape, stored.v_rows.data());
  return stored;
}

// The case's queries as the current table's attention reads them over key_dtype rows: a table
// that scores tiled K caches in int8 meets each query (a head's row) as its int8 codes against
// the row's largest magnitude (step d = amax / 127) plus those of what they leave over at step
// d / 256, both rounded to nearest and held within +-127.
std::vector<float> QueriesAsRead(const AttentionCase& c, tensor::DType key_dtype) {
  const int64_t hd = c.args.head_dim;
  const tensor::KeyShape shape{key_dtype, c.args.n_kv_heads, hd, c.args.k_tiles_wanted};
  if (!shape.tiled() || !internal::Table().attend_rounds_q8_queries) return c.q;
  const auto code = [](float x) { return std::clamp(std::nearbyint(x), -127.0f, 127.0f); };
  std::vector<float> rounded(c.q.size());
  for (size_t r = 0; r < c.q.size() / static_cast<size_t>(hd); ++r) {
    const float* row = c.q.data() + r * hd;
    float amax = 0.0f;
    for (int64_t i = 0; i < hd; ++i) amax = std::max(amax, std::fabs(row[i]));
    const float d = amax / 127.0f;
    const float inverse = amax > 0.0f ? 127.0f / amax : 0.0f;
    for (int64_t i = 0; i < hd; ++i) {
      const float first = code(row[i] * inverse);
      const float second = code(std::fma(-d, first, row[i]) * (inverse * 256.0f));
      rounded[r * hd + i] = (256.0f * first + second) * (d / 256.0f);
    }
  }
  return rounded;
}

// Whether the current table's attention over args' cache encodes its V weights as integers.
bool EncodesValueWeights(const AttentionArgs& args) {
  return ValueShapeOf(args).spanned() && internal::Table().attend_encodes_q8_value_weights;
}

// How near the current table's attention over args' cache comes to the f32 result over its
// values: 1e-5 of the output's norm, or, where V weights are encoded as 15-bit integers (each
// rounded by up to 1/65534 of its step's largest), 3e-4: over these random cases, whose weights
// spread about 17-fold within a step, that moved outputs by up to 9e-5.
double ToleranceOver(const AttentionArgs& args) { return EncodesValueWeights(args) ? 3e-4 : 1e-5; }

class AttentionTest : public IsaTest {};

TEST_P(AttentionTest, GqaMatchesDoublePrecisionReference) {
  std::mt19937 rng(11);
  ThreadPool pool(2);
  for (int64_t head_dim : {3, 16, 40, 64, 128}) {
    for (int64_t first_pos : {0, 5, 63, 64, 200}) {
      for (int64_t n_tokens : {1, 4, 9}) {
        SCOPED_TRACE(testing::Message()
                     << "hd=" << head_dim << " first_pos=" << first_pos << " tokens=" << n_tokens);
        AttentionCase c = MakeCase(rng, n_tokens, first_pos, head_dim, 8, 2);
        std::vector<float> got(c.q.size()), want(c.q.size());
        c.args.out = want.data();
        ref::Attention(c.args);
        c.args.out = got.data();
        Attention(c.args, &pool);
        EXPECT_LT(RelativeError(got.data(), want.data(), got.size()), 1e-5);
      }
    }
  }
}

TEST_P(AttentionTest, FirstTokenSeesOnlyItselfAndCausalityHolds) {
  std::mt19937 rng(12);
  AttentionCase c = MakeCase(rng, 3, 0, 8, 4, 1);
  std::vector<float> out(c.q.size());
  c.args.out = out.data();
  Attention(c.args, nullptr);
  // Token 0 attends only to position 0: its output is v[0] exactly (up to rounding).
  for (int64_t h = 0; h < 4; ++h) {
    for (int64_t i = 0; i < 8; ++i) EXPECT_NEAR(out[h * 8 + i], c.v[i], 1e-6);
  }
  // Changing the cache past a token's position leaves that token's output unchanged.
  std::vector<float> again(c.q.size());
  for (int64_t i = 2 * 8; i < 3 * 8; ++i) c.v[i] += 10.0f;
  c.args.out = again.data();
  Attention(c.args, nullptr);
  for (int64_t i = 0; i < 2 * 4 * 8; ++i) EXPECT_EQ(again[i], out[i]);
}

TEST_P(AttentionTest, IndependentOfThreadCount) {
  std::mt19937 rng(13);
  AttentionCase c = MakeCase(rng, 5, 70, 64, 8, 2);
  ThreadPool pool2(2), pool3(3);
  std::vector<float> a(c.q.size()), b(c.q.size()), d(c.q.size());
  c.args.out = a.data();
  Attention(c.args, nullptr);
  c.args.out = b.data();
  Attention(c.args, &pool2);
  c.args.out = d.data();
  Attention(c.args, &pool3);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, d);
}

// A token attended alone (a decode step, or a prompt resumed from the cache) gives the same bits
// as inside a batch of tokens, for every GQA shape and across block boundaries.
TEST_P(AttentionTest, ATokenAloneMatchesItsBatchBitForBit) {
  std::mt19937 rng(14);
  for (int64_t n_kv_heads : {1, 2, 4, 8}) {
    const int64_t n_tokens = 70, head_dim = 40, n_heads = 8;
    AttentionCase c = MakeCase(rng, n_tokens, 30, head_dim, n_heads, n_kv_heads);
    std::vector<float> batch(c.q.size());
    c.args.out = batch.data();
    ThreadPool pool(2);
    Attention(c.args, &pool);
    const int64_t row = n_heads * head_dim;
    for (int64_t t : {0, 33, 69}) {
      AttentionArgs one = c.args;
      one.q = c.q.data() + t * row;
      one.n_tokens = 1;
      one.first_pos = c.args.first_pos + t;
      std::vector<float> alone(row);
      one.out = alone.data();
      Attention(one, &pool);
      EXPECT_EQ(0, std::memcmp(alone.data(), batch.data() + t * row, row * sizeof(float)))
          << "kv heads " << n_kv_heads << " token " << t;
    }
  }
}

// Attention over a batch of n_tokens after first_pos cached positions, on two threads, stays
// near the reference, and each of `tokens` attended alone gives its bits in the batch on one,
// two and three threads, for f32 and Q8_0 KV rows and Q8_0 K with Q4_0 V (as rows, K tiled and V
// in spans).
void ExpectEachTokenAloneGetsTheBatchBits(std::mt19937& rng, int64_t n_tokens, int64_t first_pos,
                                          int64_t head_dim, std::initializer_list<int64_t> tokens) {
  const int64_t n_heads = 8, n_kv_heads = 2;
  for (const auto& [dtypes, layout] :
       {std::pair{kF32Cache, kRows}, std::pair{kQ8Cache, kRows},
        std::pair{kQ8Cache, kTilesAndSpans}, std::pair{kQ4ValueCache, kRows},
        std::pair{kQ4ValueCache, kTilesAndSpans}}) {
    SCOPED_TRACE(testing::Message() << tensor::DTypeName(dtypes.key) << " K, "
                                    << tensor::DTypeName(dtypes.value) << " V, tiles and spans "
                                    << layout.k_tiles);
    AttentionCase c = MakeCase(rng, n_tokens, first_pos, head_dim, n_heads, n_kv_heads);
    UseLayout(layout, &c.args);
    const StoredKv stored = StoreKv(c, dtypes);
    stored.UseIn(&c.args);
    c.args.k_dtype = dtypes.key;
    c.args.v_dtype = dtypes.value;
    ThreadPool pool2(2), pool3(3);
    std::vector<float> batch(c.q.size()), want(c.q.size());
    const std::vector<float> q_as_read = QueriesAsRead(c, dtypes.key);
    AttentionArgs reference = c.args;
    reference.q = q_as_read.data();
    reference.out = want.data();
    ref::Attention(reference);
    c.args.out = batch.data();
    Attention(c.args, &pool2);
    EXPECT_LT(RelativeError(batch.data(), want.data(), want.size()), ToleranceOver(c.args));
    const int64_t row = n_heads * head_dim;
    for (int64_t t : tokens) {
      AttentionArgs one = c.args;
      one.q = c.q.data() + t * row;
      one.n_tokens = 1;
      one.first_pos = first_pos + t;
      for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2, &pool3}) {
        std::vector<float> alone(row);
        one.out = alone.data();
        Attention(one, pool);
        EXPECT_EQ(0, std::memcmp(alone.data(), batch.data() + t * row, row * sizeof(float)))
            << "token " << t << " threads " << (pool != nullptr ? pool->num_threads() : 1);
      }
    }
  }
}

// A cache longer than one chunk of the online softmax: the chunks run as tasks of their own in a
// decode step and one after another in a prompt's tiles, and are merged the same way, so a token
// alone gives its bits in the batch, on any number of threads, and both stay near the reference.
TEST_P(AttentionTest, ChunksOfALongCacheMergeToTheSameBitsInEveryTask) {
  std::mt19937 rng(17);
  // Tokens whose last chunk holds 1017, 1 and 12 positions.
  ExpectEachTokenAloneGetsTheBatchBits(rng, 20, 2040, 64, {0, 8, 19});
}

// A decode step over a cache of chunks enough for every thread takes all the heads in one item
// (each block of positions for one KV head after another), with fewer threads than that it takes
// one KV head's heads an item, and a prompt's tiles take them by KV head: a token gets the same
// bits in each. Five chunks: every head an item on one and two threads, a KV head's on three.
TEST_P(AttentionTest, DecodeOverManyChunksTakesEveryHeadWithTheBatchBits) {
  std::mt19937 rng(23);
  ExpectEachTokenAloneGetsTheBatchBits(rng, 3, 5000, 128, {0, 1, 2});
}

// The case's attention over its K stored as Q8_0 rows and V as value_dtype rows (K tiled, V in
// spans where it asks), and the f32 attention of queries q_f32 over the same values dequantised.
struct QuantisedOutputs {
  StoredKv stored;
  AttentionArgs quantised_args;  // over `stored`
  std::vector<float> quantised, dequantised;
};
void AttendQuantisedAndDequantised(const AttentionCase& c, tensor::DType value_dtype,
                                   const float* q_f32, ThreadPool* pool, QuantisedOutputs* out) {
  const int64_t n_values = (c.args.first_pos + c.args.n_tokens) * c.args.n_kv_heads *
                           c.args.head_dim;
  out->stored = StoreKv(c, {tensor::DType::kQ8_0, value_dtype});
  std::vector<float> k_deq(n_values), v_deq(n_values);
  tensor::DequantizeRow(tensor::DType::kQ8_0, out->stored.k_rows.data(), k_deq.data(), n_values);
  tensor::DequantizeRow(value_dtype, out->stored.v_rows.data(), v_deq.data(), n_values);
  out->quantised.resize(c.q.size());
  out->dequantised.resize(c.q.size());
  out->quantised_args = c.args;
  out->stored.UseIn(&out->quantised_args);
  out->quantised_args.k_dtype = tensor::DType::kQ8_0;
  out->quantised_args.v_dtype = value_dtype;
  out->quantised_args.out = out->quantised.data();
  Attention(out->quantised_args, pool);
  AttentionArgs f32 = c.args;
  f32.k_dtype = f32.v_dtype = tensor::DType::kF32;
  f32.q = q_f32;
  f32.k_cache = k_deq.data();
  f32.v_cache = v_deq.data();
  f32.out = out->dequantised.data();
  Attention(f32, pool);
}

// Q8_0 K rows and Q8_0 or Q4_0 V rows give the f32 result over their dequantised values (and so
// stay within the reference's tolerance), also for the last token attended alone: exactly, or,
// in a table that scores them in int8 or encodes V weights, within ToleranceOver for the queries
// as it reads them. K as rows or tiled, V as rows or in spans.
void ExpectQuantisedKvEqualsF32OverTheDequantisedRows(std::mt19937& rng, int64_t n_tokens,
                                                      int64_t first_pos, int64_t n_heads,
                                                      int64_t n_kv_heads, int64_t head_dim,
                                                      const KvLayout& layout,
                                                      tensor::DType value_dtype) {
  SCOPED_TRACE(testing::Message() << "tokens " << n_tokens << " heads " << n_heads
                                  << " kv heads " << n_kv_heads << " head_dim " << head_dim
                                  << " K tiles " << layout.k_tiles << " V spans "
                                  << layout.v_spans << " V " << tensor::DTypeName(value_dtype));
  AttentionCase c = MakeCase(rng, n_tokens, first_pos, head_dim, n_heads, n_kv_heads);
  UseLayout(layout, &c.args);
  c.args.k_dtype = tensor::DType::kQ8_0;
  c.args.v_dtype = value_dtype;
  const std::vector<float> q_as_read = QueriesAsRead(c, tensor::DType::kQ8_0);
  const bool exact = q_as_read == c.q && !EncodesValueWeights(c.args);
  const double tolerance = ToleranceOver(c.args);
  ThreadPool pool(2);
  QuantisedOutputs outputs;
  AttendQuantisedAndDequantised(c, value_dtype, q_as_read.data(), &pool, &outputs);
  const AttentionArgs& q8 = outputs.quantised_args;
  const std::vector<float>& quantised = outputs.quantised;
  const std::vector<float>& dequantised = outputs.dequantised;
  std::vector<float> want(c.q.size());
  if (exact) {
    EXPECT_EQ(quantised, dequantised);
  } else {
    EXPECT_LT(RelativeError(quantised.data(), dequantised.data(), want.size()), tolerance);
  }
  AttentionArgs reference = q8;
  reference.q = q_as_read.data();
  reference.out = want.data();
  ref::Attention(reference);
  EXPECT_LT(RelativeError(quantised.data(), want.data(), want.size()), tolerance);

  const int64_t last = n_tokens - 1;
  AttentionArgs one = q8;
  one.q = c.q.data() + last * n_heads * head_dim;
  one.n_tokens = 1;
  one.first_pos = first_pos + last;
  std::vector<float> alone(n_heads * head_dim);
  one.out = alone.data();
  Attention(one, &pool);
  EXPECT_EQ(0, std::memcmp(alone.data(), quantised.data() + last * n_heads * head_dim,
                           alone.size() * sizeof(float)));
}

TEST_P(AttentionTest, QuantisedKvEqualsF32AttentionOverTheDequantisedRows) {
  std::mt19937 rng(15);
  for (const auto& [layout, value_dtype] :
       {std::pair{kRows, tensor::DType::kQ8_0}, std::pair{kTilesAndSpans, tensor::DType::kQ8_0},
        std::pair{KvLayout{true, false}, tensor::DType::kQ8_0},
        std::pair{KvLayout{false, true}, tensor::DType::kQ8_0},
        std::pair{kRows, tensor::DType::kQ4_0}, std::pair{kTilesAndSpans, tensor::DType::kQ4_0}}) {
    const auto expect = [&](int64_t n_tokens, int64_t first_pos, int64_t n_heads,
                            int64_t n_kv_heads, int64_t head_dim = 64) {
      ExpectQuantisedKvEqualsF32OverTheDequantisedRows(rng, n_tokens, first_pos, n_heads,
                                                       n_kv_heads, head_dim, layout, value_dtype);
    };
    for (int64_t n_kv_heads : {1, 2}) expect(9, 100, 4, n_kv_heads);
    // Tiles of exactly the queries one group reads together: of tokens, heads or both.
    expect(2, 40, 4, 2);
    expect(4, 40, 2, 2);
    expect(2, 40, 2, 2);
    expect(4, 40, 1, 1);
    expect(2, 40, 1, 1);
    expect(1, 40, 4, 1);
    // Two query heads per KV head: a decode step of one pair, and a pair beside a single query.
    expect(1, 40, 4, 2);
    expect(3, 40, 2, 2);
    // Heads of 2, 4 and 9 pairs of blocks, and one that is no multiple of 64, which tiles (and
    // so int8 scores) leave out.
    for (int64_t head_dim : {128, 256, 576, 96}) {
      expect(5, 40, 4, 2, head_dim);
      expect(1, 40, 4, 2, head_dim);
    }
  }
}

// Positions whose scores lie 80 below the maximum, a whole step of them after the step holding
// it (weights of e^-80: an encoding against their own largest would overflow a float) or before
// it (rescaled away when the maximum rises): near the f32 result over the same values, which is
// the mean of the high positions' V rows.
TEST_P(AttentionTest, QuantisedValueStepsFarBelowTheMaximumAddNothing) {
  std::mt19937 rng(29);
  constexpr int64_t kHeadDim = 64, kPositions = 600;
  for (const auto& [high_first, value_dtype] :
       {std::pair{true, tensor::DType::kQ8_0}, std::pair{false, tensor::DType::kQ8_0},
        std::pair{true, tensor::DType::kQ4_0}, std::pair{false, tensor::DType::kQ4_0}}) {
    SCOPED_TRACE(testing::Message() << "high positions first: " << high_first << ", V "
                                    << tensor::DTypeName(value_dtype));
    AttentionCase c = MakeCase(rng, 1, kPositions - 1, kHeadDim, 2, 1);
    UseLayout(kTilesAndSpans, &c.args);
    c.args.k_dtype = tensor::DType::kQ8_0;
    c.args.v_dtype = value_dtype;
    std::fill(c.q.begin(), c.q.end(), 5.0f);
    for (int64_t p = 0; p < kPositions; ++p) {
      const bool high = (p < 256) == high_first;
      std::fill_n(c.k.begin() + p * kHeadDim, kHeadDim, high ? 1.0f : -1.0f);
    }
    ThreadPool pool(2);
    QuantisedOutputs outputs;
    AttendQuantisedAndDequantised(c, value_dtype, c.q.data(), &pool, &outputs);
    const std::vector<float>& quantised = outputs.quantised;
    const std::vector<float>& dequantised = outputs.dequantised;
    EXPECT_LT(RelativeError(quantised.data(), dequantised.data(), quantised.size()),
              ToleranceOver(c.args));
  }
}

DS_INSTANTIATE_FOR_EACH_ISA(AttentionTest);

}  // namespace
}  // namespace ds::kernels
