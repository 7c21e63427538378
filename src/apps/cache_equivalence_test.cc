// The prefix cache end to end on the engine, for every architecture: random multi-turn
// conversations (replies kept or rewritten, edits deep in the history, regenerations,
// interrupted replies) give, on every cached turn, the same greedy ids and bit for bit the same
// logprobs as a cold engine computing the whole prompt, while each turn computes only what is
// new.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <random>

#include "apps/test_models.h"
#include "engine/engine.h"

namespace ds::apps {
namespace {

using engine::DoneEvent;
using engine::Engine;
using engine::EngineOptions;
using engine::RequestOptions;
using engine::TokenEvent;

constexpr int64_t kBlockTokens = 16;
constexpr int64_t kInterval = 40;

struct Reply {
  std::vector<int32_t> ids;
  std::vector<std::vector<engine::TokenLogprob>> top;
  DoneEvent done;
};

Reply Generate(Engine* engine, const std::vector<int32_t>& prompt, std::vector<int64_t> boundaries,
               int64_t max_new, int64_t cancel_after = -1) {
  RequestOptions options;
  options.prompt = prompt;
  options.sampling.temperature = 0;
  options.max_new_tokens = max_new;
  options.top_logprobs = 4;
  options.boundary_positions = std::move(boundaries);
  auto handle = engine->Submit(std::move(options));
  EXPECT_TRUE(handle.ok()) << handle.status().ToString();
  Reply reply;
  if (!handle.ok()) return reply;
  TokenEvent token;
  while ((*handle)->Next(&token, &reply.done)) {
    reply.ids.push_back(token.id);
    reply.top.push_back(token.top);
    if (static_cast<int64_t>(reply.ids.size()) == cancel_after) (*handle)->Cancel();
  }
  EXPECT_TRUE(reply.done.status.ok()) << reply.done.status.ToString();
  return reply;
}

EngineOptions Options(int64_t cache_bytes) {
  EngineOptions options;
  options.context_tokens = 1024;
  options.prefill_chunk_tokens = 32;
  options.threads = 2;
  options.cache.budget_bytes = cache_bytes;
  options.cache.block_tokens = kBlockTokens;
  options.cache.snapshot_interval_tokens = kInterval;
  return options;
}

// A cancelled request may produce a token more or less, so only the common part is compared.
void ExpectSameReply(const Reply& cached, const Reply& cold, bool cancelled = false) {
  const size_t n = cancelled ? std::min(cached.ids.size(), cold.ids.size()) : cold.ids.size();
  if (!cancelled) {
    ASSERT_EQ(cached.ids.size(), cold.ids.size());
  }
  for (size_t t = 0; t < n; ++t) ASSERT_EQ(cached.ids[t], cold.ids[t]) << "token " << t;
  for (size_t t = 0; t < n; ++t) {
    ASSERT_EQ(cached.top[t].size(), cold.top[t].size());
    for (size_t k = 0; k < cold.top[t].size(); ++k) {
      EXPECT_EQ(cached.top[t][k].id, cold.top[t][k].id) << "token " << t << " rank " << k;
      EXPECT_EQ(cached.top[t][k].logprob, cold.top[t][k].logprob)
          << "token " << t << " rank " << k;
    }
  }
}

class CacheEquivalenceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { tm_ = BuildTestModel(TestConfig(GetParam())); }
  int32_t RandomId() { return static_cast<int32_t>(rng_() % tm_->model->hparams().n_vocab); }
  std::vector<int32_t> RandomIds(int64_t n) {
    std::vector<int32_t> ids(n);
    for (auto& id : ids) id = RandomId();
    return ids;
  }

  std::unique_ptr<TestModel> tm_;
  std::mt19937 rng_{17};
};

TEST_P(CacheEquivalenceTest, EveryCachedTurnMatchesAColdRun) {
  Engine cached(tm_->model.get(), Options(int64_t{256} << 20));
  Engine cold(tm_->model.get(), Options(0));
  const bool hybrid = cached.cache()->has_recurrent_state();
  for (int conversation = 0; conversation < 5; ++conversation) {
    std::vector<int32_t> history = RandomIds(20 + rng_() % 30);
    std::vector<int64_t> boundaries = {static_cast<int64_t>(history.size()) / 2};
    int64_t previous_prompt = 0;
    for (int turn = 0; turn < 8; ++turn) {
      SCOPED_TRACE("conversation " + std::to_string(conversation) + " turn " +
                   std::to_string(turn) + " prompt " + std::to_string(history.size()));
      const int action = static_cast<int>(rng_() % 10);
      int64_t expect_at_least = previous_prompt;
      if (turn > 0 && action == 0 && history.size() > 8) {
        // An edit deep in the history: everything past it must be recomputed.
        const size_t at = 1 + rng_() % (history.size() - 2);
        history[at] = RandomId();
        expect_at_least = 0;
      }
      const auto n_prompt = static_cast<int64_t>(history.size());
      const int64_t cancel_after = action == 1 ? 3 : -1;
      Reply hit = Generate(&cached, history, boundaries, 6, cancel_after);
      Reply reference = Generate(&cold, history, boundaries, 6, cancel_after);
      ExpectSameReply(hit, reference, cancel_after > 0);
      const engine::Timings& t = hit.done.timings.generation;
      EXPECT_EQ(t.cached_prompt_tokens + t.computed_prompt_tokens, n_prompt);
      EXPECT_GE(t.computed_prompt_tokens, 1);
      EXPECT_EQ(reference.done.timings.generation.cached_prompt_tokens, 0);
      if (turn > 0 && expect_at_least > 0) {
        // The last turn's reply (or, when it was cut, its state at the cut) is where this
        // prompt resumes; dense models may resume anywhere in what is cached.
        EXPECT_GE(t.cached_prompt_tokens, expect_at_least)
            << "limit " << hit.done.timings.cache.limit_name();
      }
      if (action == 2) {
        // Regenerate the same prompt: its end snapshot holds no logits, so it resumes at the
        // deepest point stored before the end (dense: one token before it).
        previous_prompt = hybrid ? (n_prompt - 1) / kInterval * kInterval : n_prompt - 1;
        for (int64_t b : boundaries) {
          if (b < n_prompt) previous_prompt = std::max(previous_prompt, b);
        }
        continue;
      }
      previous_prompt = n_prompt;
      boundaries.push_back(n_prompt);
      // The reply as generated (or, one time in four, rewritten by the client), then new input.
      std::vector<int32_t> reply = hit.ids;
      if (rng_() % 4 == 0 && !reply.empty()) {
        reply.front() = (reply.front() + 1) % static_cast<int32_t>(tm_->model->hparams().n_vocab);
        previous_prompt = n_prompt;
      } else if (!reply.empty()) {
        previous_prompt = n_prompt + static_cast<int64_t>(reply.size()) - 1;
      }
      history.insert(history.end(), reply.begin(), reply.end());
      boundaries.push_back(static_cast<int64_t>(history.size()));
      std::vector<int32_t> added = RandomIds(3 + rng_() % 40);
      history.insert(history.end(), added.begin(), added.end());
    }
  }
  const cache::CacheStats stats = cached.cache()->stats();
  EXPECT_GT(stats.hits, 0);
  if (hybrid) {
    EXPECT_GT(stats.num_snapshots[static_cast<int>(cache::SnapshotKind::kInterval)], 0);
    EXPECT_GT(stats.num_snapshots[static_cast<int>(cache::SnapshotKind::kMessageBoundary)], 0);
  }
}

TEST_P(CacheEquivalenceTest, ManyConversationsUnderATightBudgetStayCorrect) {
  // A budget of a few conversations' worth: eviction runs all the time and every answer must
  // still equal the cold one.
  Engine cold(tm_->model.get(), Options(0));
  Engine probe(tm_->model.get(), Options(int64_t{64} << 20));
  Generate(&probe, RandomIds(64), {}, 1);
  const int64_t per_conversation = probe.cache()->stats().used_bytes;
  Engine cached(tm_->model.get(), Options(per_conversation * 3));
  std::vector<std::vector<int32_t>> conversations;
  for (int i = 0; i < 6; ++i) conversations.push_back(RandomIds(30 + rng_() % 20));
  for (int round = 0; round < 4; ++round) {
    for (auto& history : conversations) {
      Reply hit = Generate(&cached, history, {}, 4);
      Reply reference = Generate(&cold, history, {}, 4);
      ExpectSameReply(hit, reference);
      history.insert(history.end(), hit.ids.begin(), hit.ids.end());
      std::vector<int32_t> added = RandomIds(5);
      history.insert(history.end(), added.begin(), added.end());
    }
  }
  const cache::CacheStats stats = cached.cache()->stats();
  EXPECT_LE(stats.used_bytes, stats.budget_bytes);
  EXPECT_GT(stats.evictions[0] + stats.evictions[1] + stats.evictions[2], 0);
}

TEST_P(CacheEquivalenceTest, AClientThatKeepsItsPartialReplyResumesAfterIt) {
  Engine cached(tm_->model.get(), Options(int64_t{64} << 20));
  Engine cold(tm_->model.get(), Options(0));
  const bool hybrid = cached.cache()->has_recurrent_state();
  // The engine runs ahead of the client; a try counts when the cancel landed mid-generation
  // within the reach of the states it keeps (16 positions, every 4th), as over a real socket.
  bool landed = false;
  for (int attempt = 0; attempt < 20 && !landed; ++attempt) {
    const std::vector<int32_t> prompt = RandomIds(40);
    RequestOptions options;
    options.prompt = prompt;
    options.sampling.temperature = 0;
    options.max_new_tokens = 64;
    auto handle = cached.Submit(options);
    ASSERT_TRUE(handle.ok());
    std::vector<int32_t> received;
    TokenEvent token;
    DoneEvent done;
    // The client got 6 tokens; the server noticed it was gone a little later.
    while ((*handle)->Next(&token, &done)) {
      received.push_back(token.id);
      if (received.size() == 8) (*handle)->Cancel(/*tokens_delivered=*/6);
    }
    const int64_t generated = done.timings.generation.generated_tokens;
    if (done.stop_reason != engine::StopReason::kCallback || generated - 1 - 6 >= 12) continue;
    landed = true;
    std::vector<int32_t> next = prompt;
    next.insert(next.end(), received.begin(), received.begin() + 6);
    const std::vector<int32_t> added = RandomIds(6);
    next.insert(next.end(), added.begin(), added.end());
    Reply hit = Generate(&cached, next, {}, 4);
    ExpectSameReply(hit, Generate(&cold, next, {}, 4));
    // Hybrid: the kept state at 44 (every 4th position); dense: KV cut anywhere, at 46.
    EXPECT_EQ(hit.done.timings.generation.cached_prompt_tokens, hybrid ? 44 : 46)
        << hit.done.timings.cache.limit_name();
  }
  EXPECT_TRUE(landed) << "no cancel landed while the engine was still generating";
}

// A restart between two turns: the second turn is served from the disk tier (memory is empty),
// gives the cold engine's ids and logprobs, and is copied into memory for the turn after.
TEST_P(CacheEquivalenceTest, AfterARestartTheNextTurnIsADiskHitEqualToAColdRun) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                                    ("equivalence_disk_" + GetParam() + "_" +
                                     std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  EngineOptions options = Options(int64_t{64} << 20);
  options.cache.disk =
      engine::StateCacheOptions::Disk{dir.string(), int64_t{1} << 30, true, /*root_dir=*/""};
  Engine cold(tm_->model.get(), Options(0));
  std::vector<int32_t> prompt = RandomIds(70);
  Reply first;
  {
    Engine before(tm_->model.get(), options);
    ASSERT_NE(before.cache()->disk(), nullptr);
    first = Generate(&before, prompt, {30}, 5);
  }  // the disk tier writes everything queued before it closes
  std::vector<int32_t> next = prompt;
  next.insert(next.end(), first.ids.begin(), first.ids.end() - 1);
  const std::vector<int32_t> added = RandomIds(9);
  next.insert(next.end(), added.begin(), added.end());
  {
    Engine after(tm_->model.get(), options);
    ASSERT_NE(after.cache()->disk(), nullptr);
    EXPECT_EQ(after.cache()->stats().used_bytes, 0) << "memory starts empty";
    Reply hit = Generate(&after, next, {30}, 5);
    ExpectSameReply(hit, Generate(&cold, next, {30}, 5));
    EXPECT_EQ(hit.done.timings.cache.tier, engine::CacheTier::kDisk);
    EXPECT_EQ(hit.done.timings.generation.cached_prompt_tokens, 70 + 5 - 1);
    // Promoted: the same prompt once more is a memory hit.
    Reply again = Generate(&after, next, {30}, 5);
    EXPECT_EQ(again.done.timings.cache.tier, engine::CacheTier::kMemory);
    ExpectSameReply(again, hit);
  }  // its writer is done
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

// The restore guard: with a reserve larger than any machine's memory no restore fits, so every
// turn is computed, with the cold output and the reason in the timings.
TEST_P(CacheEquivalenceTest, ARestoreThatDoesNotFitIsComputedInstead) {
  EngineOptions options = Options(int64_t{64} << 20);
  options.cache.restore_reserve_bytes = int64_t{1} << 62;
  Engine guarded(tm_->model.get(), options);
  Engine cold(tm_->model.get(), Options(0));
  const std::vector<int32_t> prompt = RandomIds(50);
  Reply first = Generate(&guarded, prompt, {20}, 3);
  std::vector<int32_t> next = prompt;
  next.insert(next.end(), first.ids.begin(), first.ids.end());
  Reply second = Generate(&guarded, next, {20}, 3);
  ExpectSameReply(second, Generate(&cold, next, {20}, 3));
  EXPECT_EQ(second.done.timings.generation.cached_prompt_tokens, 0);
  EXPECT_EQ(second.done.timings.cache.limit, cache::ResumeLimit::kRestoreGuard)
      << second.done.timings.cache.limit_name();
}

// A prompt edited early (Claude Code rewrites a line of its system prompt at token 1.5k-3k when
// the model changes) recomputes at most max(512, d / 8) tokens before the edit at token d, with
// the default snapshot spacing.
TEST(EarlyDivergenceTest, AnEditAtTokenDRecomputesAtMostAnEighthBeforeIt) {
  auto tm = BuildTestModel(TestConfig("qwen35moe"));
  EngineOptions options = Options(int64_t{1} << 30);
  options.context_tokens = 32768;
  options.prefill_chunk_tokens = 512;
  options.cache.block_tokens = 256;
  options.cache.snapshot_interval_tokens = engine::StateCacheOptions{}.snapshot_interval_tokens;
  Engine engine(tm->model.get(), options);
  std::mt19937 rng(5);
  std::vector<int32_t> prompt(21000);
  for (int32_t& id : prompt) id = static_cast<int32_t>(rng() % tm->model->hparams().n_vocab);
  Generate(&engine, prompt, {}, 1);
  for (int64_t d : {2000, 6000, 20000}) {
    std::vector<int32_t> edited = prompt;
    edited[d] = (edited[d] + 1) % static_cast<int32_t>(tm->model->hparams().n_vocab);
    const Reply reply = Generate(&engine, edited, {}, 1);
    const int64_t cached = reply.done.timings.generation.cached_prompt_tokens;
    EXPECT_LE(cached, d);
    EXPECT_GE(cached, d - std::max<int64_t>(512, d / 8)) << "edit at " << d;
  }
}

INSTANTIATE_TEST_SUITE_P(AllArchitectures, CacheEquivalenceTest,
                         ::testing::Values("qwen35moe", "qwen35", "qwen3next", "qwen3", "llama",
                                           "qwen35moe/q4_K"));

}  // namespace
}  // namespace ds::apps
