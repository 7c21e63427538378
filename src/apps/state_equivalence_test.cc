// The properties the prefix cache rests on, checked on every architecture: a prompt may be
// prefilled in any split, a snapshot restores bit for bit, and truncated KV plus the recurrent
// snapshot taken at that position equals a cold prefill of the prefix.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "apps/test_models.h"

namespace ds::apps {
namespace {

using state::SequenceState;

constexpr int64_t kPromptTokens = 150;

std::vector<int32_t> Prompt(int64_t n, int64_t n_vocab) {
  std::mt19937 rng(5);
  std::vector<int32_t> ids(n);
  for (auto& id : ids) id = static_cast<int32_t>(rng() % n_vocab);
  return ids;
}

// Prefills tokens [begin, end) in pieces of `split` and returns the last logits.
std::vector<float> Prefill(model::Model& m, SequenceState* s, const std::vector<int32_t>& ids,
                           int64_t begin, int64_t end, int64_t split, ThreadPool* pool) {
  std::vector<float> logits(m.hparams().n_vocab);
  for (int64_t b = begin; b < end; b += split) {
    int64_t n = std::min(split, end - b);
    Status st = m.Forward(std::span<const int32_t>(ids).subspan(b, n), s,
                          model::LogitsMode::kLast, logits.data(), pool);
    EXPECT_TRUE(st.ok()) << st.ToString();
  }
  return logits;
}

std::vector<float> AsFloats(const std::vector<uint8_t>& snapshot) {
  const int64_t header = SequenceState::kSnapshotHeaderBytes;
  std::vector<float> out((snapshot.size() - header) / 4);
  std::memcpy(out.data(), snapshot.data() + header, out.size() * 4);
  return out;
}

// max |a - b| / max |b|
double RelativeError(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double diff = 0, scale = 1e-30;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::fabs(a[i] - b[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(b[i])));
  }
  return diff / scale;
}

class StateEquivalenceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { tm_ = BuildTestModel(TinyConfig(GetParam())); }
  model::Model& model() { return *tm_->model; }
  SequenceState NewState() { return SequenceState(model().StateLayoutFor(1024)); }

  std::unique_ptr<TestModel> tm_;
  ThreadPool pool_{2};
};

TEST_P(StateEquivalenceTest, AnySplitGivesSameLogitsAndState) {
  std::vector<int32_t> ids = Prompt(kPromptTokens, model().hparams().n_vocab);
  SequenceState whole = NewState();
  std::vector<float> reference = Prefill(model(), &whole, ids, 0, kPromptTokens, kPromptTokens,
                                         &pool_);
  std::vector<float> reference_state = AsFloats(whole.Snapshot());
  for (int64_t split : {1, 7, 64, 100}) {
    SequenceState s = NewState();
    std::vector<float> logits = Prefill(model(), &s, ids, 0, kPromptTokens, split, &pool_);
    EXPECT_LT(RelativeError(logits, reference), 1e-4) << "split " << split;
    EXPECT_LT(RelativeError(AsFloats(s.Snapshot()), reference_state), 1e-4) << "split " << split;
  }
}

TEST_P(StateEquivalenceTest, SnapshotRestoreContinuesBitForBit) {
  std::vector<int32_t> ids = Prompt(kPromptTokens, model().hparams().n_vocab);
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
  std::vector<int32_t> ids = Prompt(kPromptTokens, model().hparams().n_vocab);
  const int64_t p = 70;
  SequenceState s = NewState();
  Prefill(model(), &s, ids, 0, p, p, &pool_);
  std::vector<uint8_t> recurrent = s.Snapshot(SequenceState::Parts::kRecurrentOnly);
  Prefill(model(), &s, ids, p, kPromptTokens, kPromptTokens, &pool_);
  s.TruncateKv(p);
  ASSERT_TRUE(s.Restore(recurrent).ok());

  SequenceState cold = NewState();
  Prefill(model(), &cold, ids, 0, p, p, &pool_);
  EXPECT_LT(RelativeError(AsFloats(s.Snapshot()), AsFloats(cold.Snapshot())), 1e-5);
  std::vector<float> resumed = Prefill(model(), &s, ids, p, p + 20, 20, &pool_);
  std::vector<float> from_cold = Prefill(model(), &cold, ids, p, p + 20, 20, &pool_);
  EXPECT_LT(RelativeError(resumed, from_cold), 1e-5);
}

TEST_P(StateEquivalenceTest, ContextOverflowIsAnErrorAndLeavesStateUnchanged) {
  SequenceState s(model().StateLayoutFor(32));
  std::vector<int32_t> ids = Prompt(40, model().hparams().n_vocab);
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
  std::vector<int32_t> ids = Prompt(kPromptTokens, model().hparams().n_vocab);
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

INSTANTIATE_TEST_SUITE_P(AllArchitectures, StateEquivalenceTest,
                         ::testing::Values("qwen35moe", "qwen35", "qwen3next", "qwen3", "qwen2",
                                           "llama"));

}  // namespace
}  // namespace ds::apps
