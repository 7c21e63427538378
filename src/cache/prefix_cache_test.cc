#include "cache/prefix_cache.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "cache/cache_test_util.h"
#include "cache/chain_hash.h"

namespace ds::cache {
namespace {

using testing::ExpectRestoresPrefix;
using testing::FakeStore;

constexpr int64_t kBlock = 4;
constexpr int64_t kBlockBytes = 40;
constexpr int64_t kSnapshotBytes = 100;

std::vector<int32_t> Iota(int32_t count, int32_t first = 100) {
  std::vector<int32_t> ids(count);
  std::iota(ids.begin(), ids.end(), first);
  return ids;
}

std::vector<int32_t> First(const std::vector<int32_t>& ids, size_t count) {
  return {ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(count)};
}

CacheOptions Options(bool hybrid, int64_t budget = int64_t{1} << 40) {
  CacheOptions options;
  options.block_tokens = kBlock;
  options.budget_bytes = budget;
  options.has_recurrent_state = hybrid;
  options.model_seed = 7;
  return options;
}

class CacheFixture {
 public:
  explicit CacheFixture(const CacheOptions& options) : cache(options), store(&cache) {}

  InsertResult Snap(const std::vector<int32_t>& tokens,
                    SnapshotKind kind = SnapshotKind::kMessageBoundary,
                    int64_t bytes = kSnapshotBytes) {
    StatusOr<InsertResult> result =
        cache.Insert(tokens, InsertSpec{kBlockBytes, SnapshotSpec{kind, bytes}});
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    if (!result.ok()) return {};
    store.Store(tokens, *result, kBlock, kBlockBytes, bytes);
    cache.CheckInvariants();
    return *result;
  }

  InsertResult Blocks(const std::vector<int32_t>& tokens) {
    StatusOr<InsertResult> result = cache.Insert(tokens, InsertSpec{kBlockBytes, std::nullopt});
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    if (!result.ok()) return {};
    store.Store(tokens, *result, kBlock, kBlockBytes, 0);
    return *result;
  }

  Match Find(const std::vector<int32_t>& tokens, int64_t max_restore_bytes = INT64_MAX) {
    Match match = cache.Lookup(tokens, LookupOptions{max_restore_bytes});
    ExpectRestoresPrefix(match, tokens, store, kBlock, cache.options().has_recurrent_state);
    return match;
  }

  PrefixCache cache;
  FakeStore store;
};

TEST(PrefixCacheTest, HybridResumesAtDeepestSnapshotInsideCommonPrefix) {
  CacheFixture f(Options(/*hybrid=*/true));
  const std::vector<int32_t> seq = Iota(20);
  f.Snap(First(seq, 5));
  f.Snap(First(seq, 9));
  f.Snap(First(seq, 14));
  std::vector<int32_t> query = First(seq, 12);
  query.push_back(7);
  query.push_back(8);
  Match match = f.Find(query);
  EXPECT_EQ(match.resume_tokens, 9);
  EXPECT_EQ(match.blocks.size(), 2u);
  ASSERT_TRUE(match.tail.has_value());
  EXPECT_EQ(match.tail->num_rows, 1);
  EXPECT_EQ(match.longest_match_tokens, 12);
  EXPECT_EQ(match.cached_token_at_divergence(), seq[12]);
  // The window stays inside the record that diverged: the tail of the snapshot at 14.
  EXPECT_EQ(match.cached_window, std::vector<int32_t>({seq[12], seq[13]}));
  EXPECT_EQ(match.limit, ResumeLimit::kNoSnapshot);
  EXPECT_EQ(f.Find(seq).resume_tokens, 14);
}

TEST(PrefixCacheTest, AtLeastOneTokenIsAlwaysComputed) {
  CacheFixture f(Options(/*hybrid=*/true));
  const std::vector<int32_t> seq = Iota(10);
  f.Snap(First(seq, 6));
  f.Snap(seq);
  Match same = f.Find(seq);
  EXPECT_EQ(same.resume_tokens, 6);
  EXPECT_EQ(same.limit, ResumeLimit::kSnapshotAtEnd);
  std::vector<int32_t> longer = seq;
  longer.push_back(1);
  Match next = f.Find(longer);
  EXPECT_EQ(next.resume_tokens, 10);
  EXPECT_EQ(next.limit, ResumeLimit::kReachedMatch);
  EXPECT_EQ(next.cached_token_at_divergence(), kNoToken);
}

TEST(PrefixCacheTest, PartialBlockTailIsVerifiedById) {
  CacheFixture f(Options(/*hybrid=*/true));
  const std::vector<int32_t> seq = Iota(7);  // snapshot tail = ids [4, 7)
  f.Snap(seq);
  std::vector<int32_t> query = seq;
  query[5] = 1;
  query.push_back(2);
  Match match = f.Find(query);
  EXPECT_EQ(match.resume_tokens, 0);
  EXPECT_EQ(match.longest_match_tokens, 5);
  EXPECT_EQ(match.cached_token_at_divergence(), seq[5]);
  EXPECT_EQ(match.limit, ResumeLimit::kNoSnapshot);
}

// Every block at one depth gets the same key: the worst collision a hash can produce.
Hash128 DepthOnlyHash(const Hash128& parent, std::span<const int32_t> ids, uint64_t seed) {
  return Hash128{parent.low + (ids.empty() ? seed : 1), 0};
}

TEST(PrefixCacheTest, HashCollisionIsNeverTrusted) {
  CacheOptions options = Options(/*hybrid=*/true);
  options.chain_hash = DepthOnlyHash;
  CacheFixture f(options);
  const std::vector<int32_t> a = Iota(9, 100);
  const std::vector<int32_t> b = Iota(9, 200);
  f.Snap(a);
  StatusOr<InsertResult> refused = f.cache.Insert(
      b, InsertSpec{kBlockBytes, SnapshotSpec{SnapshotKind::kPromptEnd, kSnapshotBytes}});
  ASSERT_TRUE(refused.ok());
  EXPECT_TRUE(refused->hash_collision);
  EXPECT_TRUE(refused->new_blocks.empty());
  EXPECT_EQ(refused->new_snapshot, 0u);
  EXPECT_EQ(f.cache.stats().hash_collisions, 1);
  std::vector<int32_t> query = b;
  query.push_back(1);
  Match miss = f.Find(query);
  EXPECT_EQ(miss.resume_tokens, 0);
  EXPECT_EQ(miss.longest_match_tokens, 0);
  std::vector<int32_t> hit = a;
  hit.push_back(1);
  EXPECT_EQ(f.Find(hit).resume_tokens, 9);
}

TEST(PrefixCacheTest, SnapshotsShareBlocksAndAreNotDuplicated) {
  CacheFixture f(Options(/*hybrid=*/true));
  const std::vector<int32_t> seq = Iota(13);
  InsertResult first = f.Snap(seq);
  EXPECT_EQ(first.new_blocks.size(), 3u);
  EXPECT_NE(first.new_snapshot, 0u);
  InsertResult again = f.Snap(seq);
  EXPECT_TRUE(again.new_blocks.empty());
  EXPECT_EQ(again.new_snapshot, 0u);
  std::vector<int32_t> branch = First(seq, 8);
  branch.insert(branch.end(), {1, 2, 3, 4, 5});
  InsertResult other = f.Snap(branch);
  ASSERT_EQ(other.new_blocks.size(), 1u);
  EXPECT_EQ(other.new_blocks[0].index, 2);
  EXPECT_EQ(f.cache.stats().num_blocks, 4);
  EXPECT_EQ(f.cache.stats().used_bytes, 4 * kBlockBytes + 2 * kSnapshotBytes);
}

TEST(PrefixCacheTest, DenseResumesAtAnyCachedPrefix) {
  CacheFixture f(Options(/*hybrid=*/false));
  const std::vector<int32_t> seq = Iota(11);
  InsertResult blocks = f.Blocks(seq);
  EXPECT_EQ(blocks.new_blocks.size(), 2u);
  EXPECT_EQ(blocks.new_snapshot, 0u);
  std::vector<int32_t> query = First(seq, 6);
  query.push_back(1);
  Match inside = f.Find(query);  // block 1 is read partially: rows [4, 6)
  EXPECT_EQ(inside.resume_tokens, 6);
  ASSERT_TRUE(inside.tail.has_value());
  EXPECT_FALSE(inside.tail->is_snapshot);
  EXPECT_EQ(inside.tail->num_rows, 2);
  EXPECT_EQ(inside.limit, ResumeLimit::kReachedMatch);
  Match same = f.Find(First(seq, 8));  // a full match still computes the last token
  EXPECT_EQ(same.resume_tokens, 7);
  Match past = f.Find(seq);  // ids 8..10 were never stored without a tail record
  EXPECT_EQ(past.resume_tokens, 8);
  EXPECT_FALSE(past.tail.has_value());
}

TEST(PrefixCacheTest, DenseTailRecordCoversThePartialBlock) {
  CacheFixture f(Options(/*hybrid=*/false));
  const std::vector<int32_t> seq = Iota(11);
  InsertResult result = f.Snap(seq, SnapshotKind::kGenerationEnd, 30);
  EXPECT_NE(result.new_snapshot, 0u);
  std::vector<int32_t> longer = seq;
  longer.push_back(5);
  Match match = f.Find(longer);
  EXPECT_EQ(match.resume_tokens, 11);
  ASSERT_TRUE(match.tail.has_value());
  EXPECT_TRUE(match.tail->is_snapshot);
  EXPECT_EQ(match.tail->record_rows, 3);
  // A block-aligned dense end needs no record at all.
  EXPECT_EQ(f.Snap(First(seq, 8)).new_snapshot, 0u);
}

TEST(PrefixCacheTest, RestoreGuardFallsBackToAShallowerSnapshot) {
  CacheFixture f(Options(/*hybrid=*/true));
  const std::vector<int32_t> seq = Iota(20);
  f.Snap(First(seq, 5));   // restore bytes: 40 + 100
  f.Snap(First(seq, 14));  // restore bytes: 3 * 40 + 100
  Match guarded = f.Find(seq, /*max_restore_bytes=*/200);
  EXPECT_EQ(guarded.resume_tokens, 5);
  EXPECT_EQ(guarded.restore_bytes, 140);
  EXPECT_EQ(guarded.limit, ResumeLimit::kRestoreGuard);
  EXPECT_EQ(f.Find(seq, 0).resume_tokens, 0);
  EXPECT_EQ(f.Find(seq).restore_bytes, 220);
}

TEST(PrefixCacheTest, RefusesWhatCannotFitAndLeavesTheCacheUnchanged) {
  CacheFixture f(Options(/*hybrid=*/true, /*budget=*/300));
  f.Snap(Iota(5));
  const CacheStats before = f.cache.stats();
  StatusOr<InsertResult> big = f.cache.Insert(
      Iota(3, 500), InsertSpec{kBlockBytes, SnapshotSpec{SnapshotKind::kPromptEnd, 301}});
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), StatusCode::kResourceExhausted);
  // 8 blocks of 40 bytes exceed 300 bytes even with the cache emptied.
  StatusOr<InsertResult> long_path = f.cache.Insert(
      Iota(33, 600), InsertSpec{kBlockBytes, SnapshotSpec{SnapshotKind::kPromptEnd, 10}});
  EXPECT_FALSE(long_path.ok());
  const CacheStats after = f.cache.stats();
  EXPECT_EQ(after.used_bytes, before.used_bytes);
  EXPECT_EQ(after.inserts_refused, 2);
  EXPECT_TRUE(f.store.evicted().empty());
}

TEST(PrefixCacheTest, LeasePinsAgainstEvictionUntilReleased) {
  CacheFixture f(Options(/*hybrid=*/true, /*budget=*/300));
  const std::vector<int32_t> a = Iota(9, 100);  // 2 blocks + snapshot = 180 bytes
  f.Snap(a);
  std::vector<int32_t> query = a;
  query.push_back(0);
  Match held = f.Find(query);
  ASSERT_EQ(held.resume_tokens, 9);
  EXPECT_EQ(f.cache.stats().pinned_bytes, 180);
  StatusOr<InsertResult> b = f.cache.Insert(
      Iota(5, 300), InsertSpec{kBlockBytes, SnapshotSpec{SnapshotKind::kPromptEnd, 100}});
  EXPECT_FALSE(b.ok()) << "180 pinned + 140 new exceed 300";
  Match moved = std::move(held);
  moved.lease.Release();
  EXPECT_EQ(f.cache.stats().pinned_bytes, 0);
  InsertResult ok = f.Snap(Iota(5, 300));
  EXPECT_NE(ok.new_snapshot, 0u);
  EXPECT_EQ(f.store.evicted().size(), 1u);  // a's snapshot; its blocks stay until needed
  f.Snap(Iota(5, 400));
  EXPECT_EQ(f.store.evicted().size(), 3u);  // a's useless blocks go before any snapshot
  EXPECT_EQ(f.cache.stats().evictions[static_cast<int>(EvictReason::kUselessKv)], 2);
  EXPECT_LE(f.cache.stats().used_bytes, 300);
}

TEST(PrefixCacheTest, PinnedSnapshotIsSkippedEvenWhenCheapest) {
  CacheFixture f(Options(/*hybrid=*/true, /*budget=*/400));
  const std::vector<int32_t> a = Iota(6, 100);
  f.Snap(a, SnapshotKind::kInterrupted);  // weight 0.25: the cheapest record
  f.Snap(Iota(6, 200), SnapshotKind::kMessageBoundary);
  std::vector<int32_t> query = a;
  query.push_back(1);
  Match held = f.Find(query);
  ASSERT_EQ(held.resume_tokens, 6);
  f.Snap(Iota(6, 300));  // 420 bytes: one unpinned conversation must go
  EXPECT_EQ(f.Find(query).resume_tokens, 6);
  std::vector<int32_t> other = Iota(6, 200);
  other.push_back(1);
  EXPECT_EQ(f.Find(other).resume_tokens, 0);
  held.lease.Release();
  EXPECT_FALSE(held.lease.held());
}

TEST(PrefixCacheTest, EvictionListenerDescribesRecordsAndMissesSayEvicted) {
  CacheFixture f(Options(/*hybrid=*/true, /*budget=*/250));
  std::vector<EvictedRecord> seen;
  std::vector<std::vector<int32_t>> seen_ids;
  f.cache.SetEvictionListener([&](const EvictedRecord& record) {
    seen.push_back(record);
    seen_ids.emplace_back(record.ids.begin(), record.ids.end());
  });
  const std::vector<int32_t> a = Iota(6, 100);
  f.Snap(a);             // 140 bytes
  f.Snap(Iota(6, 300));  // 140 bytes: a's snapshot goes
  f.Snap(Iota(2, 500));  // 100 bytes: a's block, useless now, goes
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_TRUE(seen[0].is_snapshot);
  EXPECT_EQ(seen[0].begin_tokens, 4);
  EXPECT_EQ(seen[0].end_tokens, 6);
  EXPECT_EQ(seen_ids[0], (std::vector<int32_t>{104, 105}));
  EXPECT_EQ(seen[0].reason, EvictReason::kProtected);
  EXPECT_FALSE(seen[1].is_snapshot);
  EXPECT_EQ(seen[1].reason, EvictReason::kUselessKv);
  EXPECT_EQ(seen_ids[1], First(a, 4));
  std::vector<int32_t> query = a;
  query.push_back(1);
  Match miss = f.cache.Lookup(query);
  EXPECT_EQ(miss.resume_tokens, 0);
  EXPECT_EQ(miss.limit, ResumeLimit::kEvicted);
  const CacheStats stats = f.cache.stats();
  EXPECT_EQ(stats.evictions[static_cast<int>(EvictReason::kProtected)], 1);
  EXPECT_EQ(stats.evictions[static_cast<int>(EvictReason::kUselessKv)], 1);
  EXPECT_EQ(stats.lookups_by_limit[static_cast<int>(ResumeLimit::kEvicted)], 1);
}

TEST(PrefixCacheTest, StatsCountByKindAndLookups) {
  CacheFixture f(Options(/*hybrid=*/true));
  const std::vector<int32_t> seq = Iota(12);
  f.Snap(First(seq, 3), SnapshotKind::kMessageBoundary, 10);
  f.Snap(seq, SnapshotKind::kGenerationEnd, 20);
  f.Find(Iota(3, 900));
  std::vector<int32_t> query = seq;
  query.push_back(1);
  f.Find(query);
  const CacheStats stats = f.cache.stats();
  EXPECT_EQ(stats.num_snapshots[static_cast<int>(SnapshotKind::kMessageBoundary)], 1);
  EXPECT_EQ(stats.snapshot_bytes[static_cast<int>(SnapshotKind::kGenerationEnd)], 20);
  EXPECT_EQ(stats.num_blocks, 3);
  EXPECT_EQ(stats.lookups, 2);
  EXPECT_EQ(stats.hits, 1);
  EXPECT_EQ(stats.resumed_tokens, 12);
  EXPECT_EQ(stats.lookups_by_limit[static_cast<int>(ResumeLimit::kNothingCached)], 1);
}

TEST(ChainHashTest, KeysAreStableAndSeeded) {
  const std::vector<int32_t> ids = Iota(4);
  const Hash128 a = Xxh3ChainHash(Hash128{1, 2}, ids, 9);
  EXPECT_EQ(a, Xxh3ChainHash(Hash128{1, 2}, ids, 9));
  EXPECT_FALSE(a == Xxh3ChainHash(Hash128{1, 2}, ids, 10));
  EXPECT_FALSE(a == Xxh3ChainHash(Hash128{1, 3}, ids, 9));
  EXPECT_FALSE(a == Xxh3ChainHash(Hash128{1, 2}, First(ids, 3), 9));
}

}  // namespace
}  // namespace ds::cache
