// The properties the prefix cache rests on, checked on every architecture, all bit for bit: a
// prompt may be prefilled in any split, a snapshot restores exactly, and truncated KV plus the
// recurrent snapshot taken at that position equals a cold prefill of the prefix.
#include <gtest/gtest.h>

#include <cstring>

#include "apps/test_models.h"

namespace ds::apps {
namespace {

using state::SequenceState;

constexpr int64_t kPromptTokens = 150;

std::vector<float> AsFloats(const std::vector<uint8_t>& snapshot) {
  const int64_t header = SequenceState::kSnapshotHeaderBytes;
  std::vector<float> out((snapshot.size() - header) / 4);
  std::memcpy(out.data(), snapshot.data() + header, out.size() * 4);
  return out;
}

class StateEquivalenceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { tm_ = BuildTestModel(TestConfig(GetParam())); }
  model::Model& model() { return *tm_->model; }
  SequenceState NewState() { return SequenceState(model().StateLayoutFor(1024)); }

  std::unique_ptr<TestModel> tm_;
  ThreadPool pool_{2};
};

TEST_P(StateEquivalenceTest, AnySplitGivesSameLogitsAndState) {
  std::vector<int32_t> ids = RandomPrompt(kPromptTokens, model().hparams().n_vocab, 5);
  SequenceState whole = NewState();
  std::vector<float> reference = Prefill(model(), &whole, ids, 0, kPromptTokens, kPromptTokens,
                                         &pool_);
  std::vector<float> reference_state = AsFloats(whole.Snapshot());
  for (int64_t split : {1, 7, 64, 100}) {
    SequenceState s = NewState();
    std::vector<float> logits = Prefill(model(), &s, ids, 0, kPromptTokens, split, &pool_);
    EXPECT_EQ(logits, reference) << "split " << split;
    EXPECT_EQ(AsFloats(s.Snapshot()), reference_state) << "split " << split;
  }
}

TEST_P(StateEquivalenceTest, SnapshotRestoreContinuesBitForBit) {
  std::vector<int32_t> ids = RandomPrompt(kPromptTokens, model().hparams().n_vocab, 5);
  SequenceState original = NewState();
  Prefill(model(), &original, ids, 0, 90, 90, &pool_);
  std::vector<uint8_t> snapshot = original.Snapshot();
  SequenceState restored = NewState();
  ASSERT_TRUE(restored.Restore(snapshot).ok());
  EXPECT_EQ(restored.Snapshot(), snapshot);
  for (int64_t split : {1, 60}) {
    // The sequence that never went through bytes, against one restored from them.
    SequenceState untouched = NewState();
    Prefill(model(), &untouched, ids, 0, 90, 90, &pool_);
    SequenceState round_trip = NewState();
    ASSERT_TRUE(round_trip.Restore(snapshot).ok());
    std::vector<float> expected =
        Prefill(model(), &untouched, ids, 90, kPromptTokens, split, &pool_);
    std::vector<float> got = Prefill(model(), &round_trip, ids, 90, kPromptTokens, split, &pool_);
    EXPECT_EQ(0, std::memcmp(got.data(), expected.data(), got.size() * 4)) << "split " << split;
    EXPECT_EQ(round_trip.Snapshot(), untouched.Snapshot()) << "split " << split;
  }
}

TEST_P(StateEquivalenceTest, TruncatedKvPlusRecurrentSnapshotEqualsColdPrefix) {
  std::vector<int32_t> ids = RandomPrompt(kPromptTokens, model().hparams().n_vocab, 5);
  const int64_t p = 70;
  SequenceState s = NewState();
  Prefill(model(), &s, ids, 0, p, p, &pool_);
  std::vector<uint8_t> recurrent = s.Snapshot(SequenceState::Parts::kRecurrentOnly);
  Prefill(model(), &s, ids, p, kPromptTokens, kPromptTokens, &pool_);
  s.TruncateKv(p);
  ASSERT_TRUE(s.Restore(recurrent).ok());

  SequenceState cold = NewState();
  Prefill(model(), &cold, ids, 0, p, p, &pool_);
  EXPECT_EQ(AsFloats(s.Snapshot()), AsFloats(cold.Snapshot()));
  std::vector<float> resumed = Prefill(model(), &s, ids, p, p + 20, 20, &pool_);
  std::vector<float> from_cold = Prefill(model(), &cold, ids, p, p + 20, 20, &pool_);
  EXPECT_EQ(resumed, from_cold);
}

TEST_P(StateEquivalenceTest, ContextOverflowIsAnErrorAndLeavesStateUnchanged) {
  SequenceState s(model().StateLayoutFor(32));
  std::vector<int32_t> ids = RandomPrompt(40, model().hparams().n_vocab, 5);
  std::vector<float> logits(model().hparams().n_vocab);
  Status st = model().Forward(std::span<const int32_t>(ids).subspan(0, 20), &s,
                              model::LogitsMode::kLast, logits.data(), &pool_);
  ASSERT_TRUE(st.ok());
  std::vector<uint8_t> before = s.Snapshot();
  st = model().Forward(std::span<const int32_t>(ids).subspan(20, 20), &s,
                       model::LogitsMode::kLast, logits.data(), &pool_);
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(s.Snapshot(), before);
}

TEST_P(StateEquivalenceTest, ResultsDoNotDependOnTheThreadCount) {
  std::vector<int32_t> ids = RandomPrompt(kPromptTokens, model().hparams().n_vocab, 5);
  std::vector<std::vector<float>> logits;
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    SequenceState s = NewState();
    Prefill(model(), &s, ids, 0, 100, 100, &pool);
    logits.push_back(Prefill(model(), &s, ids, 100, 104, 1, &pool));
  }
  EXPECT_EQ(logits[0], logits[1]);
  EXPECT_EQ(logits[0], logits[2]);
}

// "/q4_K" (q5_K, q6_K): K-quant weights, whose matrices of whole groups of rows the AVX-512 VNNI
// kernels read interleaved (one token and a prompt's tiles alike).
INSTANTIATE_TEST_SUITE_P(AllArchitectures, StateEquivalenceTest,
                         ::testing::Values("qwen35moe", "qwen35", "qwen3next", "qwen3", "qwen2",
                                           "llama", "qwen35moe/q4_K", "qwen3next/q4_K",
                                           "qwen3/q4_K", "qwen35moe/q5_K", "qwen3/q6_K",
                                           "qwen35moe/many_experts"));

}  // namespace
}  // namespace ds::apps
