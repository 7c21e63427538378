// Simulated agent sessions at real sizes: 28 turns growing from 20k to ~130k tokens, blocks of
// 256 tokens, KV of 24 KiB per token (6 MiB per block) and 74 MiB of recurrent state per
// snapshot. The engine places snapshots where DESIGN.md says: at the start of the last user
// message while prefilling, and at the end of generation. Every turn after a session's first
// must compute at most its new tokens + 64.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

#include "cache/prefix_cache.h"

namespace ds::cache {
namespace {

using Tokens = std::vector<int32_t>;

constexpr int64_t kBlock = 256;
constexpr int64_t kKvBytesPerToken = 24 * 1024;
constexpr int64_t kRecurrentBytes = int64_t{74} << 20;
constexpr int64_t kGiB = int64_t{1} << 30;
constexpr int kTurns = 28;
constexpr int64_t kSlackTokens = 64;

// The engine's side: payload bytes by id (sizes only) and the request loop.
class FakeEngine {
 public:
  explicit FakeEngine(int64_t budget_bytes) : cache_(Options(budget_bytes)) {
    cache_.SetEvictionListener([this](const EvictedRecord& record) {
      ASSERT_EQ(payload_bytes_.erase(record.payload), 1u);
    });
  }

  static CacheOptions Options(int64_t budget_bytes) {
    CacheOptions options;
    options.block_tokens = kBlock;
    options.budget_bytes = budget_bytes;
    options.model_seed = 42;
    return options;
  }

  // Tokens the request computes (prompt minus resume point).
  int64_t Admit(const Tokens& prompt) {
    Match match = cache_.Lookup(prompt);
    for (const BlockRef& block : match.blocks) EXPECT_TRUE(payload_bytes_.contains(block.payload));
    if (match.tail) {
      EXPECT_TRUE(payload_bytes_.contains(match.tail->payload));
    }
    return static_cast<int64_t>(prompt.size()) - match.resume_tokens;
  }

  // Snapshot of the state after tokens[0, end); false when the budget refused it.
  bool Snapshot(const Tokens& tokens, int64_t end, SnapshotKind kind) {
    const std::span<const int32_t> prefix(tokens.data(), static_cast<size_t>(end));
    const int64_t bytes = kRecurrentBytes + (end % kBlock) * kKvBytesPerToken;
    StatusOr<InsertResult> result =
        cache_.Insert(prefix, InsertSpec{kBlock * kKvBytesPerToken, SnapshotSpec{kind, bytes}});
    if (!result.ok()) {
      EXPECT_EQ(result.status().code(), StatusCode::kResourceExhausted);
      return false;
    }
    for (const NewBlock& block : result->new_blocks) {
      payload_bytes_[block.payload] = kBlock * kKvBytesPerToken;
    }
    if (result->new_snapshot != 0) payload_bytes_[result->new_snapshot] = bytes;
    int64_t total = 0;
    for (const auto& [id, size] : payload_bytes_) total += size;
    EXPECT_EQ(total, cache_.stats().used_bytes);
    EXPECT_LE(total, cache_.options().budget_bytes);
    return true;
  }

  PrefixCache& cache() { return cache_; }

 private:
  PrefixCache cache_;
  std::map<PayloadId, int64_t> payload_bytes_;
};

class Session {
 public:
  Session(int32_t first_id, uint32_t seed, const Tokens& system)
      : next_id_(first_id), rng_(seed), history_(system) {}

  // One request: appends a user (or tool) message and an assistant header, serves it, and
  // appends the generation. Returns {computed tokens, new tokens}.
  std::pair<int64_t, int64_t> Turn(FakeEngine* engine, bool first, bool* refused) {
    const auto user_start = static_cast<int64_t>(history_.size());
    Tokens prompt = history_;
    Append(&prompt, first ? 16000 : Uniform(2900, 4000));
    Append(&prompt, 3);  // "<|im_start|>assistant\n"
    const int64_t computed = engine->Admit(prompt);
    *refused = !engine->Snapshot(prompt, user_start, SnapshotKind::kMessageBoundary);
    Tokens generated = prompt;
    Append(&generated, Uniform(100, 700));
    // The last sampled token has not been fed through the model yet.
    const auto processed = static_cast<int64_t>(generated.size()) - 1;
    *refused = !engine->Snapshot(generated, processed, SnapshotKind::kGenerationEnd) || *refused;
    const auto new_tokens = static_cast<int64_t>(prompt.size()) - user_start;
    history_ = std::move(generated);
    return {computed, new_tokens};
  }

  int64_t size() const { return static_cast<int64_t>(history_.size()); }

 private:
  int64_t Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  void Append(Tokens* tokens, int64_t count) {
    for (int64_t i = 0; i < count; ++i) tokens->push_back(next_id_++);
  }

  int32_t next_id_;
  std::mt19937 rng_;
  Tokens history_;
};

Tokens SystemPrompt() {
  Tokens system(4000);
  for (size_t i = 0; i < system.size(); ++i) system[i] = static_cast<int32_t>(7 * i % 151000);
  return system;
}

TEST(AgentSessionTest, EveryTurnComputesOnlyItsNewTokens) {
  // 130k tokens of KV are 3.0 GiB; the budget adds room for a few snapshots.
  FakeEngine engine(3 * kGiB + kGiB / 2);
  Session session(1'000'000, 1, SystemPrompt());
  for (int turn = 0; turn < kTurns; ++turn) {
    bool refused = false;
    const auto [computed, new_tokens] = session.Turn(&engine, turn == 0, &refused);
    ASSERT_FALSE(refused) << "turn " << turn;
    if (turn > 0) {
      ASSERT_LE(computed, new_tokens + kSlackTokens) << "turn " << turn;
    }
  }
  EXPECT_GT(session.size(), 115'000);
  EXPECT_LE(session.size(), 131'072);
  const CacheStats stats = engine.cache().stats();
  EXPECT_GT(stats.evictions[static_cast<int>(EvictReason::kLowValue)], 0) << "old snapshots go";
  EXPECT_EQ(stats.evictions[static_cast<int>(EvictReason::kProtected)], 0);
  engine.cache().CheckInvariants();
}

TEST(AgentSessionTest, TwoInterleavedSessionsSharingASystemPromptBothHit) {
  FakeEngine engine(7 * kGiB);
  const Tokens system = SystemPrompt();
  Session a(1'000'000, 2, system);
  Session b(2'000'000, 3, system);
  for (int turn = 0; turn < kTurns; ++turn) {
    for (Session* session : {&a, &b}) {
      bool refused = false;
      const auto [computed, new_tokens] = session->Turn(&engine, turn == 0, &refused);
      ASSERT_FALSE(refused) << "turn " << turn;
      if (turn > 0) {
        ASSERT_LE(computed, new_tokens + kSlackTokens) << "turn " << turn;
      } else if (session == &b) {
        EXPECT_EQ(computed, new_tokens) << "b's first turn resumes after the shared system prompt";
      }
    }
  }
  engine.cache().CheckInvariants();
  EXPECT_LE(engine.cache().stats().used_bytes, 7 * kGiB);
}

TEST(AgentSessionTest, AContextLargerThanTheBudgetIsRefusedNotThrashed) {
  // 2 GiB holds about 85k tokens of KV: past that, inserts are refused (nothing is evicted for
  // them) and the cache keeps serving the deepest state it could hold.
  FakeEngine engine(2 * kGiB);
  Session session(1'000'000, 1, SystemPrompt());
  bool ever_refused = false;
  for (int turn = 0; turn < kTurns; ++turn) {
    bool refused = false;
    const auto [computed, new_tokens] = session.Turn(&engine, turn == 0, &refused);
    if (turn > 0 && !ever_refused) {
      ASSERT_LE(computed, new_tokens + kSlackTokens);
    }
    if (refused) {
      EXPECT_GT(session.size() * kKvBytesPerToken, 2 * kGiB - 2 * kRecurrentBytes);
    }
    ever_refused = ever_refused || refused;
  }
  EXPECT_TRUE(ever_refused);
  EXPECT_GT(engine.cache().stats().inserts_refused, 0);
  engine.cache().CheckInvariants();
}

}  // namespace
}  // namespace ds::cache
