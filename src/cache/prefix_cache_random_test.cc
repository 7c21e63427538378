// Randomized test of PrefixCache against a naive model: conversations grow, branch and are looked
// up while leases come and go, under an unlimited and a small budget, with a real and a
// collision-prone hash. The naive model is the list of records the cache inserted and has not
// evicted (FakeStore), searched by brute force.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cache/cache_test_util.h"
#include "cache/chain_hash.h"
#include "cache/prefix_cache.h"

namespace ds::cache {
namespace {

using testing::ExpectRestoresPrefix;
using testing::FakeStore;
using testing::IsPrefixOf;
using Tokens = std::vector<int32_t>;

constexpr int64_t kBlock = 4;
constexpr int64_t kBytesPerToken = 10;
constexpr int64_t kBlockBytes = kBlock * kBytesPerToken;
constexpr int64_t kRecurrentBytes = 60;
constexpr int64_t kUnlimited = int64_t{1} << 40;
constexpr uint64_t kSeed = 5;
constexpr size_t kMaxConversations = 12;
constexpr size_t kMaxTokens = 48;

// Collides whenever two sibling blocks have the same id sum mod 3.
Hash128 WeakHash(const Hash128& parent, std::span<const int32_t> ids, uint64_t seed) {
  int64_t sum = 0;
  for (int32_t id : ids) sum += id;
  return Hash128{parent.low * 31 + static_cast<uint64_t>(sum % 3) + seed, ids.size()};
}

struct Config {
  bool hybrid;
  bool weak_hash;
  int64_t budget;
  uint32_t seed;
};

std::string ConfigName(const ::testing::TestParamInfo<Config>& info) {
  return std::string(info.param.hybrid ? "Hybrid" : "Dense") +
         (info.param.weak_hash ? "WeakHash" : "Xxh3") +
         (info.param.budget == kUnlimited ? "Unlimited" : "Small");
}

class RandomCacheTest : public ::testing::TestWithParam<Config> {
 protected:
  RandomCacheTest() : rng_(GetParam().seed), cache_(MakeOptions()) {
    cache_.SetEvictionListener([this](const EvictedRecord& record) {
      for (const Match& match : held_) {
        EXPECT_FALSE(Holds(match, record.payload)) << "evicted a pinned payload";
      }
      store_.OnEvict(record);
    });
  }

  CacheOptions MakeOptions() const {
    CacheOptions options;
    options.block_tokens = kBlock;
    options.budget_bytes = GetParam().budget;
    options.has_recurrent_state = GetParam().hybrid;
    options.model_seed = kSeed;
    options.max_ghosts = 64;
    options.chain_hash = GetParam().weak_hash ? WeakHash : nullptr;
    return options;
  }

  static bool Holds(const Match& match, PayloadId id) {
    for (const BlockRef& block : match.blocks) {
      if (block.payload == id) return true;
    }
    return match.tail && match.tail->payload == id;
  }

  int Random(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  Tokens RandomTokens(int count) {
    Tokens tokens(count);
    for (int32_t& t : tokens) t = Random(0, 2);
    return tokens;
  }

  // Cached blocks from the start of `tokens`, as the cache's walk finds them.
  std::vector<PayloadId> NaivePath(std::span<const int32_t> tokens) const {
    std::vector<PayloadId> path;
    for (size_t end = kBlock; end <= tokens.size(); end += kBlock) {
      std::optional<PayloadId> block = store_.Find(tokens.first(end), false);
      if (!block) break;
      path.push_back(*block);
    }
    return path;
  }

  // The longest prefix of `tokens` that starts some stored record.
  int64_t NaiveLongestMatch(std::span<const int32_t> tokens) const {
    size_t longest = 0;
    while (longest < tokens.size() && store_.AnyStartsWith(tokens.first(longest + 1))) ++longest;
    return static_cast<int64_t>(longest);
  }

  // The deepest position whose state the stored records rebuild, by brute force.
  int64_t NaiveResume(std::span<const int32_t> tokens) const {
    const int64_t limit = std::max<int64_t>(static_cast<int64_t>(tokens.size()) - 1, 0);
    if (!GetParam().hybrid) return std::min(NaiveLongestMatch(tokens), limit);
    const auto num_path = static_cast<int64_t>(NaivePath(tokens).size());
    for (int64_t p = limit; p > 0; --p) {
      if (p / kBlock <= num_path && store_.Find(tokens.first(p), true)) return p;
    }
    return 0;
  }

  void CheckLookup(const Tokens& tokens, const Match& match) {
    ExpectRestoresPrefix(match, tokens, store_, kBlock, GetParam().hybrid);
    const int64_t longest = NaiveLongestMatch(tokens);
    ASSERT_EQ(match.longest_match_tokens, longest);
    if (match.limit != ResumeLimit::kRestoreGuard) {
      ASSERT_EQ(match.resume_tokens, NaiveResume(tokens)) << "not the deepest resume point";
    }
    // Some record goes on past the match with one of the ids 0..2; the cache must name one.
    Tokens next(tokens.begin(), tokens.begin() + longest);
    next.push_back(match.cached_token_at_divergence());
    bool can_explain = false;
    for (int32_t id = 0; id <= 2; ++id) {
      next.back() = id;
      can_explain = can_explain || store_.AnyStartsWith(next);
    }
    if (longest < static_cast<int64_t>(tokens.size()) && can_explain) {
      next.back() = match.cached_token_at_divergence();
      ASSERT_TRUE(store_.AnyStartsWith(next)) << "wrong cached token at the divergence";
    } else {
      ASSERT_EQ(match.cached_token_at_divergence(), kNoToken);
    }
  }

  Match LookupAndCheck(const Tokens& tokens) {
    LookupOptions options;
    if (Random(0, 9) == 0) options.max_restore_bytes = Random(0, 400);
    Match match = cache_.Lookup(tokens, options);
    CheckLookup(tokens, match);
    EXPECT_LE(match.restore_bytes, options.max_restore_bytes);
    return match;
  }

  // What Insert must do, from the naive model alone.
  struct Expected {
    bool collision = false;
    bool refused = false;
    std::vector<int64_t> new_blocks;
    bool new_snapshot = false;
  };

  Hash128 KeyOf(std::span<const int32_t> tokens, int64_t num_blocks) const {
    ChainHashFn hash = GetParam().weak_hash ? WeakHash : Xxh3ChainHash;
    Hash128 key = hash(Hash128{}, {}, kSeed);
    for (int64_t j = 0; j < num_blocks; ++j)
      key = hash(key, tokens.subspan(j * kBlock, kBlock), kSeed);
    return key;
  }

  Expected Predict(std::span<const int32_t> tokens, const InsertSpec& spec) const {
    Expected expected;
    const std::vector<PayloadId> path = NaivePath(tokens);
    const auto depth = static_cast<int64_t>(path.size());
    const auto num_full = static_cast<int64_t>(tokens.size()) / kBlock;
    if (depth < num_full) {
      const Hash128 next = KeyOf(tokens, depth + 1);
      for (const auto& [id, payload] : store_.payloads()) {
        if (payload.is_snapshot || payload.prefix.size() % kBlock != 0) continue;
        const auto blocks = static_cast<int64_t>(payload.prefix.size()) / kBlock;
        if (KeyOf(payload.prefix, blocks) == next) expected.collision = true;
      }
      if (expected.collision) return expected;
    }
    const bool want = spec.snapshot && (GetParam().hybrid || tokens.size() % kBlock != 0);
    const std::optional<PayloadId> existing = want ? store_.Find(tokens, true) : std::nullopt;
    std::set<PayloadId> pinned(path.begin(), path.end());
    if (existing) pinned.insert(*existing);
    for (const Match& match : held_) {
      for (const BlockRef& block : match.blocks) pinned.insert(block.payload);
      if (match.tail) pinned.insert(match.tail->payload);
    }
    int64_t bytes = 0;
    for (PayloadId id : pinned) bytes += store_.payloads().at(id).bytes;
    for (int64_t j = depth; j < num_full; ++j) expected.new_blocks.push_back(j);
    expected.new_snapshot = want && !existing;
    bytes += (num_full - depth) * kBlockBytes + (expected.new_snapshot ? spec.snapshot->bytes : 0);
    expected.refused = bytes > GetParam().budget;
    return expected;
  }

  void InsertAndCheck(const Tokens& tokens, bool with_snapshot) {
    InsertSpec spec{kBlockBytes, std::nullopt};
    const int64_t tail = static_cast<int64_t>(tokens.size()) % kBlock;
    const int64_t snapshot_bytes =
        tail * kBytesPerToken + (GetParam().hybrid ? kRecurrentBytes : 0);
    if (with_snapshot || GetParam().hybrid) {
      spec.snapshot = SnapshotSpec{static_cast<SnapshotKind>(Random(0, kNumSnapshotKinds - 1)),
                                   std::max<int64_t>(snapshot_bytes, 1)};
    }
    const Expected expected = Predict(tokens, spec);
    const size_t evicted_before = store_.evicted().size();
    const int64_t used_before = cache_.stats().used_bytes;
    StatusOr<InsertResult> result = cache_.Insert(tokens, spec);
    ASSERT_EQ(result.ok(), !expected.refused) << result.status().ToString();
    if (!result.ok()) {
      ASSERT_EQ(result.status().code(), StatusCode::kResourceExhausted);
      ASSERT_EQ(store_.evicted().size(), evicted_before);
      ASSERT_EQ(cache_.stats().used_bytes, used_before);
      return;
    }
    ASSERT_EQ(result->hash_collision, expected.collision);
    std::vector<int64_t> new_blocks;
    for (const NewBlock& block : result->new_blocks) new_blocks.push_back(block.index);
    ASSERT_EQ(new_blocks, expected.new_blocks);
    ASSERT_EQ(result->new_snapshot != 0, expected.new_snapshot);
    // Payloads are "written" after the call, as the engine would; evictions inside the call
    // never touch the new records (they were pinned), so storing them now is sound.
    store_.Store(tokens, *result, kBlock, kBlockBytes, spec.snapshot ? spec.snapshot->bytes : 0);
    ASSERT_LE(cache_.stats().used_bytes, GetParam().budget);
    ASSERT_EQ(cache_.stats().used_bytes, store_.total_bytes());
  }

  // Admission, then snapshots inside the new part and at its end, like the engine.
  void Serve(const Tokens& tokens) {
    Match match = LookupAndCheck(tokens);
    if (::testing::Test::HasFatalFailure()) return;
    match.lease.Release();  // the restore has copied the payloads
    const auto n = static_cast<int64_t>(tokens.size());
    if (match.resume_tokens + 1 < n && Random(0, 1) == 0) {
      const int64_t middle =
          Random(static_cast<int>(match.resume_tokens) + 1, static_cast<int>(n) - 1);
      InsertAndCheck(Tokens(tokens.begin(), tokens.begin() + middle), Random(0, 1) == 0);
    }
    InsertAndCheck(tokens, Random(0, 2) != 0);
  }

  Tokens& PickConversation() {
    if (conversations_.empty() ||
        (conversations_.size() < kMaxConversations && Random(0, 9) == 0)) {
      conversations_.push_back({});
    }
    return conversations_[Random(0, static_cast<int>(conversations_.size()) - 1)];
  }

  void Step() {
    const int op = Random(0, 99);
    if (op < 40) {
      Tokens& conversation = PickConversation();
      const Tokens more = RandomTokens(Random(1, 10));
      if (conversation.size() + more.size() > kMaxTokens) conversation.clear();
      conversation.insert(conversation.end(), more.begin(), more.end());
      Serve(conversation);
    } else if (op < 55) {
      const Tokens& from = PickConversation();
      Tokens branch(from.begin(), from.begin() + Random(0, static_cast<int>(from.size())));
      const Tokens more = RandomTokens(Random(1, 8));
      branch.insert(branch.end(), more.begin(), more.end());
      if (conversations_.size() >= kMaxConversations) conversations_.erase(conversations_.begin());
      conversations_.push_back(branch);
      Serve(branch);
    } else if (op < 90) {
      const Tokens& from = PickConversation();
      Tokens query(from.begin(), from.begin() + Random(0, static_cast<int>(from.size())));
      const Tokens more = RandomTokens(Random(0, 4));
      query.insert(query.end(), more.begin(), more.end());
      Match match = LookupAndCheck(query);
      if (op >= 80 && held_.size() < 3) held_.push_back(std::move(match));
    } else if (!held_.empty()) {
      held_.erase(held_.begin() + Random(0, static_cast<int>(held_.size()) - 1));
    }
  }

  std::mt19937 rng_;
  PrefixCache cache_;
  FakeStore store_;
  std::vector<Tokens> conversations_;
  std::vector<Match> held_;  // declared after cache_: released before it is destroyed
};

TEST_P(RandomCacheTest, EveryLookupIsValidAndDeepest) {
  for (int step = 0; step < 2500; ++step) {
    Step();
    if (HasFatalFailure()) FAIL() << "at step " << step;
    if (step % 16 == 0) cache_.CheckInvariants();
  }
  cache_.CheckInvariants();
  const CacheStats stats = cache_.stats();
  EXPECT_GT(stats.hits, 100);
  if (GetParam().budget == kUnlimited) {
    EXPECT_TRUE(store_.evicted().empty());
  } else {
    EXPECT_GT(store_.evicted().size(), 50u);
  }
  if (GetParam().weak_hash) {
    EXPECT_GT(stats.hash_collisions, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Configs, RandomCacheTest,
    ::testing::Values(Config{true, false, kUnlimited, 1}, Config{true, false, 900, 2},
                      Config{true, true, kUnlimited, 3}, Config{true, true, 900, 4},
                      Config{false, false, kUnlimited, 5}, Config{false, false, 900, 6},
                      Config{false, true, kUnlimited, 7}, Config{false, true, 900, 8}),
    ConfigName);

}  // namespace
}  // namespace ds::cache
