// The 8-bit KV cache on every attention architecture: the flag's validation, the properties the
// prefix cache rests on (a snapshot restores bit for bit, truncated KV plus a recurrent snapshot
// resumes like a cold prefill, the split of a prompt does not change a bit), and how far its
// logits are from the f32 cache's.
#include "apps/kv_quant.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "apps/test_models.h"

namespace ds::apps {
namespace {

using state::SequenceState;

constexpr int64_t kPromptTokens = 150;

TEST(KvQuantTest, FlagTakesZeroOrEightAndNeedsWholeBlocksPerHead) {
  model::HParams hp;
  hp.head_dim = 64;
  EXPECT_EQ(*KvDtypeFor(0, hp), tensor::DType::kF32);
  EXPECT_EQ(*KvDtypeFor(8, hp), tensor::DType::kQ8_0);
  EXPECT_FALSE(KvDtypeFor(4, hp).ok());
  hp.head_dim = 16;
  StatusOr<tensor::DType> refused = KvDtypeFor(8, hp);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("divisible by 32"), std::string::npos);
}

class KvQuantModelTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ModelConfig config = TinyConfig(GetParam());
    config.head_dim = 32;
    tm_ = BuildTestModel(config);
  }
  model::Model& model() { return *tm_->model; }
  SequenceState NewState(tensor::DType kv_dtype = tensor::DType::kQ8_0) {
    state::StateLayout layout = model().StateLayoutFor(1024);
    layout.kv_dtype = kv_dtype;
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

// K and V rows are the same bits in any split, so are their 8-bit codes and the logits.
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
  SequenceState q8 = NewState();
  SequenceState f32 = NewState(tensor::DType::kF32);
  const std::vector<float> got = Prefill(model(), &q8, ids, 0, kPromptTokens, 64, &pool_);
  const std::vector<float> want = Prefill(model(), &f32, ids, 0, kPromptTokens, 64, &pool_);
  const double error = MaxRelativeError(got, want);
  std::printf("%s: 8-bit KV moves the logits by %.2e of their largest magnitude\n",
              GetParam().c_str(), error);
  EXPECT_LT(error, 2e-2);
  EXPECT_LT(q8.SnapshotBytes(SequenceState::Parts::kAll),
            f32.SnapshotBytes(SequenceState::Parts::kAll));
}

INSTANTIATE_TEST_SUITE_P(AttentionArchitectures, KvQuantModelTest,
                         ::testing::Values("qwen35moe", "qwen35", "qwen3next", "qwen3", "qwen2",
                                           "llama"));

}  // namespace
}  // namespace ds::apps
