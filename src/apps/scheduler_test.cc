// The engine thread with real (tiny) models: concurrent requests give the same tokens as one at a
// time, the queue is bounded, a cancelled request stops at once and frees its sequence.
#include "engine/engine.h"

#include <gtest/gtest.h>

#include <thread>

#include "apps/test_models.h"

namespace ds::apps {
namespace {

using engine::DoneEvent;
using engine::Engine;
using engine::RequestOptions;
using engine::TokenEvent;

RequestOptions Greedy(std::vector<int32_t> prompt, int64_t n) {
  RequestOptions r;
  r.prompt = std::move(prompt);
  r.sampling.temperature = 0;
  r.max_new_tokens = n;
  return r;
}

std::vector<int32_t> Collect(engine::RequestHandle* handle, DoneEvent* done) {
  std::vector<int32_t> ids;
  TokenEvent token;
  while (handle->Next(&token, done)) ids.push_back(token.id);
  return ids;
}

class SchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override { tm_ = BuildTestModel(TinyConfig("qwen35moe")); }
  std::unique_ptr<TestModel> tm_;
};

TEST_F(SchedulerTest, ParallelRequestsMatchSequentialGeneration) {
  std::vector<std::vector<int32_t>> prompts = {{1, 2, 3, 4, 5}, {9, 8, 7}, {20, 21, 22, 23}};
  std::vector<std::vector<int32_t>> expected;
  {
    Engine engine(tm_->model.get(), {.max_parallel = 1, .threads = 2, .cache = {}});
    for (const auto& p : prompts) {
      auto handle = engine.Submit(Greedy(p, 12));
      ASSERT_TRUE(handle.ok());
      DoneEvent done;
      expected.push_back(Collect(handle->get(), &done));
      EXPECT_TRUE(done.status.ok());
      EXPECT_EQ(done.stop_reason, engine::StopReason::kLength);
      EXPECT_EQ(done.timings.generation.generated_tokens, 12);
    }
  }
  Engine engine(tm_->model.get(), {.max_parallel = 3, .prefill_chunk_tokens = 2, .threads = 2, .cache = {}});
  std::vector<std::shared_ptr<engine::RequestHandle>> handles;
  for (const auto& p : prompts) handles.push_back(*engine.Submit(Greedy(p, 12)));
  for (size_t i = 0; i < prompts.size(); ++i) {
    DoneEvent done;
    EXPECT_EQ(Collect(handles[i].get(), &done), expected[i]) << "request " << i;
  }
}

TEST_F(SchedulerTest, QueueIsBounded) {
  Engine engine(tm_->model.get(), {.max_parallel = 1, .max_queued = 2, .threads = 1, .cache = {}});
  std::vector<std::shared_ptr<engine::RequestHandle>> accepted;
  int refused = 0;
  for (int i = 0; i < 10; ++i) {
    auto handle = engine.Submit(Greedy({1, 2, 3}, 200));
    if (handle.ok()) {
      accepted.push_back(*handle);
    } else {
      EXPECT_EQ(handle.status().code(), StatusCode::kUnavailable);
      ++refused;
    }
  }
  EXPECT_GE(refused, 1);
  EXPECT_LE(static_cast<int>(accepted.size()), 3);  // one running, two waiting
  for (auto& h : accepted) h->Cancel();
}

TEST_F(SchedulerTest, CancelStopsWithinOneTokenAndFreesTheSequence) {
  Engine engine(tm_->model.get(), {.max_parallel = 1, .threads = 1, .cache = {}});
  auto handle = *engine.Submit(Greedy({1, 2, 3}, 500));
  TokenEvent token;
  DoneEvent done;
  ASSERT_TRUE(handle->Next(&token, &done));
  handle->Cancel();
  int64_t produced_at_cancel = handle->num_tokens_produced();
  while (handle->Next(&token, &done)) {
  }
  // At most the step already running when Cancel() was called adds a token.
  EXPECT_LE(done.timings.generation.generated_tokens, produced_at_cancel + 1);
  EXPECT_LT(done.timings.generation.generated_tokens, 500);
  EXPECT_EQ(done.stop_reason, engine::StopReason::kCallback);
  // The sequence is free again: a new request runs to completion.
  auto next = *engine.Submit(Greedy({4, 5}, 3));
  EXPECT_EQ(Collect(next.get(), &done).size(), 3u);
}

TEST_F(SchedulerTest, BadRequestsAreRefusedUpFront) {
  Engine engine(tm_->model.get(), {.context_tokens = 16, .threads = 1, .cache = {}});
  EXPECT_EQ(engine.Submit(Greedy({}, 1)).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(engine.Submit(Greedy({1, 1 << 30}, 1)).status().code(),
            StatusCode::kInvalidArgument);
  std::vector<int32_t> long_prompt(16, 1);
  EXPECT_EQ(engine.Submit(Greedy(long_prompt, 1)).status().code(), StatusCode::kOutOfRange);
  auto fits = engine.Submit(Greedy({1, 2, 3}, -1));  // until the context is full
  ASSERT_TRUE(fits.ok());
  DoneEvent done;
  EXPECT_EQ(Collect(fits->get(), &done).size(), 13u);
}

}  // namespace
}  // namespace ds::apps
