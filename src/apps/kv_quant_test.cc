// The 8-bit KV cache, and 8-bit K with 4-bit V, on every attention architecture: the flags'
// validation, the properties the prefix cache rests on (a snapshot restores bit for bit,
// truncated KV plus a recurrent snapshot resumes like a cold prefill, the split of a prompt does
// not change a bit), and how far their logits are from the f32 cache's.
#include "apps/kv_quant.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "apps/test_models.h"

namespace ds::apps {
namespace {

using state::SequenceState;

constexpr int64_t kPromptTokens = 150;

TEST(KvQuantTest, FlagsTakeTheirBitsAndNeedWholeBlocksPerHead) {
  model::HParams hp;
  hp.head_dim = 64;
  const auto dtypes = [&](int kv_bits, int v_bits) {
    const StatusOr<KvDtypes> got = KvDtypesFor(kv_bits, v_bits, hp);
    EXPECT_TRUE(got.ok()) << got.status().message();
    return got.ok() ? std::pair{got->key, got->value} : std::pair{tensor::DType::kF32,
                                                                  tensor::DType::kF32};
  };
  using tensor::DType;
  EXPECT_EQ(dtypes(0, kValueBitsAsKeys), std::pair(DType::kF32, DType::kF32));
  EXPECT_EQ(dtypes(8, kValueBitsAsKeys), std::pair(DType::kQ8_0, DType::kQ8_0));
  EXPECT_EQ(dtypes(8, 4), std::pair(DType::kQ8_0, DType::kQ4_0));
  EXPECT_EQ(dtypes(8, 0), std::pair(DType::kQ8_0, DType::kF32));
  EXPECT_EQ(dtypes(0, 4), std::pair(DType::kF32, DType::kQ4_0));
  const StatusOr<KvDtypes> four_bit_keys = KvDtypesFor(4, kValueBitsAsKeys, hp);
  ASSERT_FALSE(four_bit_keys.ok());
  EXPECT_NE(four_bit_keys.status().message().find("--kv-quant takes 0 (f32) or 8"),
            std::string::npos);
  const StatusOr<KvDtypes> six_bit_values = KvDtypesFor(8, 6, hp);
  ASSERT_FALSE(six_bit_values.ok());
  EXPECT_NE(six_bit_values.status().message().find("--v-quant takes 0 (f32), 8 (Q8_0) or 4"),
            std::string::npos);
  hp.head_dim = 16;
  EXPECT_TRUE(KvDtypesFor(0, 0, hp).ok());
  for (const auto& [kv_bits, v_bits, flag] :
       {std::tuple{8, kValueBitsAsKeys, "--kv-quant 8"}, std::tuple{0, 4, "--v-quant 4"}}) {
    const StatusOr<KvDtypes> refused = KvDtypesFor(kv_bits, v_bits, hp);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().message().find(std::string(flag) + " needs a head size divisible "
                                              "by 32"),
              std::string::npos)
        << refused.status().message();
  }
}

// An architecture, and the V rows' dtype beside Q8_0 K rows.
class KvQuantModelTest
    : public ::testing::TestWithParam<std::tuple<std::string, tensor::DType>> {
 protected:
  void SetUp() override {
    ModelConfig config = TinyConfig(std::get<0>(GetParam()));
    config.head_dim = 32;
    tm_ = BuildTestModel(config);
  }
  model::Model& model() { return *tm_->model; }
  tensor::DType value_dtype() const { return std::get<1>(GetParam()); }
  SequenceState NewState() {
    return NewStateOf(tensor::DType::kQ8_0, value_dtype());
  }
  SequenceState NewStateOf(tensor::DType key_dtype, tensor::DType value_dtype) {
    state::StateLayout layout = model().StateLayoutFor(1024);
    layout.k_dtype = key_dtype;
    layout.v_dtype = value_dtype;
    return SequenceState(layout);
  }

  std::unique_ptr<TestModel> tm_;
  ThreadPool pool_{2};
};

TEST_P(KvQuantModelTest, SnapshotRestoreContinuesBitForBit) {
  const std::vector<int32_t> ids = RandomPrompt(kPromptTokens, model().hparams().n_vocab, 9);
  SequenceState original = NewState();
  Prefill(model(), &original, ids, 0, 90, 90, &pool_);
  const std::vector<uint8_t> snapshot = original.Snapshot();
  SequenceState restored = NewState();
  ASSERT_TRUE(restored.Restore(snapshot).ok());
  const std::vector<float> expected =
      Prefill(model(), &original, ids, 90, kPromptTokens, 7, &pool_);
  const std::vector<float> got = Prefill(model(), &restored, ids, 90, kPromptTokens, 7, &pool_);
  EXPECT_EQ(0, std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)));
  EXPECT_EQ(restored.Snapshot(), original.Snapshot());
}

// As the cache tiers rebuild a sequence: its KV rows appended, then its recurrent state.
TEST_P(KvQuantModelTest, KvRowsAppendedPlusRecurrentSnapshotContinueBitForBit) {
  const std::vector<int32_t> ids = RandomPrompt(kPromptTokens, model().hparams().n_vocab, 9);
  SequenceState original = NewState();
  Prefill(model(), &original, ids, 0, 90, 90, &pool_);
  std::vector<uint8_t> rows(original.KvRowsBytes(90));
  original.CopyKvRows(0, 90, rows.data());
  SequenceState rebuilt = NewState();
  ASSERT_TRUE(rebuilt.AppendKvRows(rows, 90, 90).ok());
  ASSERT_TRUE(rebuilt.Restore(original.Snapshot(SequenceState::Parts::kRecurrentOnly)).ok());
  const std::vector<float> expected =
      Prefill(model(), &original, ids, 90, kPromptTokens, 7, &pool_);
  const std::vector<float> got = Prefill(model(), &rebuilt, ids, 90, kPromptTokens, 7, &pool_);
  EXPECT_EQ(0, std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)));
}

TEST_P(KvQuantModelTest, TruncatedKvPlusRecurrentSnapshotResumesLikeAColdPrefill) {
  const std::vector<int32_t> ids = RandomPrompt(kPromptTokens, model().hparams().n_vocab, 9);
  const int64_t p = 70;
  SequenceState s = NewState();
  Prefill(model(), &s, ids, 0, p, p, &pool_);
  const std::vector<uint8_t> recurrent = s.Snapshot(SequenceState::Parts::kRecurrentOnly);
  Prefill(model(), &s, ids, p, kPromptTokens, kPromptTokens, &pool_);
  s.TruncateKv(p);
  ASSERT_TRUE(s.Restore(recurrent).ok());
  SequenceState cold = NewState();
  Prefill(model(), &cold, ids, 0, p, p, &pool_);
  EXPECT_EQ(s.Snapshot(), cold.Snapshot());
  const std::vector<float> resumed = Prefill(model(), &s, ids, p, p + 20, 20, &pool_);
  const std::vector<float> from_cold = Prefill(model(), &cold, ids, p, p + 20, 20, &pool_);
  EXPECT_EQ(0, std::memcmp(resumed.data(), from_cold.data(), resumed.size() * sizeof(float)));
}

// K and V rows are the same bits in any split, so are their codes and the logits.
TEST_P(KvQuantModelTest, AnySplitGivesTheSameLogits) {
  const std::vector<int32_t> ids = RandomPrompt(kPromptTokens, model().hparams().n_vocab, 9);
  SequenceState whole = NewState();
  const std::vector<float> reference =
      Prefill(model(), &whole, ids, 0, kPromptTokens, kPromptTokens, &pool_);
  for (int64_t split : {1, 64}) {
    SequenceState s = NewState();
    const std::vector<float> logits = Prefill(model(), &s, ids, 0, kPromptTokens, split, &pool_);
    EXPECT_EQ(0, std::memcmp(logits.data(), reference.data(), logits.size() * sizeof(float)))
        << "split " << split;
  }
}

TEST_P(KvQuantModelTest, LogitsStayCloseToTheF32Cache) {
  const std::vector<int32_t> ids = RandomPrompt(kPromptTokens, model().hparams().n_vocab, 9);
  SequenceState quantised = NewState();
  SequenceState f32 = NewStateOf(tensor::DType::kF32, tensor::DType::kF32);
  const std::vector<float> got = Prefill(model(), &quantised, ids, 0, kPromptTokens, 64, &pool_);
  const std::vector<float> want = Prefill(model(), &f32, ids, 0, kPromptTokens, 64, &pool_);
  const double error = MaxRelativeError(got, want);
  std::printf("%s: 8-bit K and %s V move the logits by %.2e of their largest magnitude\n",
              std::get<0>(GetParam()).c_str(),
              std::string(tensor::DTypeName(value_dtype())).c_str(), error);
  EXPECT_LT(error, value_dtype() == tensor::DType::kQ4_0 ? 1e-1 : 2e-2);
  EXPECT_LT(quantised.SnapshotBytes(SequenceState::Parts::kAll),
            f32.SnapshotBytes(SequenceState::Parts::kAll));
}

INSTANTIATE_TEST_SUITE_P(
    AttentionArchitectures, KvQuantModelTest,
    ::testing::Combine(::testing::Values("qwen35moe", "qwen35", "qwen3next", "qwen3", "qwen2",
                                         "llama"),
                       ::testing::Values(tensor::DType::kQ8_0, tensor::DType::kQ4_0)),
    [](const auto& info) {
      return std::get<0>(info.param) + "_" +
             std::string(tensor::DTypeName(std::get<1>(info.param))) + "_values";
    });

}  // namespace
}  // namespace ds::apps
