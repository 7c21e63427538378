#include "cache/eviction.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "cache/cache_test_util.h"
#include "cache/prefix_cache.h"

namespace ds::cache {
namespace {

constexpr int64_t kBlock = 4;

std::vector<int32_t> Ids(int32_t first, int32_t count = kBlock) {
  std::vector<int32_t> ids(count);
  std::iota(ids.begin(), ids.end(), first);
  return ids;
}

// Builds an index by hand so each policy rule is checked on its own.
class IndexBuilder {
 public:
  IndexBuilder() : index(kBlock, /*seed=*/1, /*hash=*/nullptr) {}

  PayloadId Block(PayloadId parent, const std::vector<int32_t>& ids, double priority = 0) {
    const PayloadId id =
        index.AddBlock(parent, index.ChildKey(index.block(parent).key, ids), ids, 10);
    index.meta(id).priority = priority;
    return id;
  }

  PayloadId Snap(PayloadId node, const std::vector<int32_t>& tail, double priority = 0) {
    const PayloadId id = index.AddSnapshot(node, tail, SnapshotKind::kMessageBoundary, 10);
    index.meta(id).priority = priority;
    return id;
  }

  int Continuations(PayloadId snapshot) {
    return CountContinuations(index, index.snapshot(snapshot));
  }

  PrefixIndex index;
};

TEST(EvictionTest, UselessKvGoesBeforeAnySnapshot) {
  IndexBuilder b;
  const PayloadId a1 = b.Block(kRootId, Ids(0), /*priority=*/9);
  const PayloadId a2 = b.Block(a1, Ids(4), /*priority=*/9);
  b.Snap(a1, {4}, /*priority=*/1);  // cheaper, but nothing past a2's start can be resumed
  const std::optional<Victim> victim = ChooseVictim(b.index, /*has_recurrent_state=*/true);
  ASSERT_TRUE(victim.has_value());
  EXPECT_EQ(victim->id, a2);
  EXPECT_EQ(victim->reason, EvictReason::kUselessKv);
}

TEST(EvictionTest, InnerSnapshotsGoBeforeTailsAndBranchPoints) {
  IndexBuilder b;
  const PayloadId a1 = b.Block(kRootId, Ids(0));
  const PayloadId a2 = b.Block(a1, Ids(4));
  const PayloadId b2 = b.Block(a1, {4, 9, 10, 11});
  const PayloadId a3 = b.Block(a2, Ids(8));
  const PayloadId branch = b.Snap(a1, {4}, /*priority=*/0);  // a2 and b2 go on past it
  const PayloadId inner = b.Snap(a2, {}, /*priority=*/100);  // only a3 goes on past it
  const PayloadId tail_a = b.Snap(a3, {}, /*priority=*/50);
  const PayloadId tail_b = b.Snap(b2, {}, /*priority=*/60);
  EXPECT_EQ(b.Continuations(branch), 2);
  EXPECT_EQ(b.Continuations(inner), 1);
  EXPECT_EQ(b.Continuations(tail_a), 0);
  std::optional<Victim> victim = ChooseVictim(b.index, true);
  ASSERT_TRUE(victim.has_value());
  EXPECT_EQ(victim->id, inner);
  EXPECT_EQ(victim->reason, EvictReason::kLowValue);
  b.index.RemoveSnapshot(inner);
  victim = ChooseVictim(b.index, true);
  ASSERT_TRUE(victim.has_value());
  EXPECT_EQ(victim->id, branch);  // protected ones go by priority
  EXPECT_EQ(victim->reason, EvictReason::kProtected);
  b.index.RemoveSnapshot(branch);
  b.index.RemoveSnapshot(tail_a);
  victim = ChooseVictim(b.index, true);
  ASSERT_TRUE(victim.has_value());
  EXPECT_EQ(victim->reason, EvictReason::kUselessKv);  // a2 (or a3) lost every snapshot past it
  EXPECT_NE(victim->id, a1);
  EXPECT_NE(victim->id, tail_b);
}

TEST(EvictionTest, LongerTailsAtTheSameNodeAreContinuations) {
  IndexBuilder b;
  const PayloadId a1 = b.Block(kRootId, Ids(0));
  const PayloadId s = b.Snap(a1, {4});
  const PayloadId longer = b.Snap(a1, {4, 5});
  EXPECT_EQ(b.Continuations(s), 1);
  EXPECT_EQ(b.Continuations(longer), 0);
  b.Snap(a1, {4, 6});
  EXPECT_EQ(b.Continuations(s), 2);
  b.Snap(a1, {7});  // another branch, not past s
  EXPECT_EQ(b.Continuations(s), 2);
}

TEST(EvictionTest, PinnedRecordsAreNeverChosen) {
  IndexBuilder b;
  const PayloadId a1 = b.Block(kRootId, Ids(0));
  const PayloadId s = b.Snap(a1, {4});
  b.index.Pin(a1);
  b.index.Pin(s);
  EXPECT_FALSE(ChooseVictim(b.index, true).has_value());
  EXPECT_FALSE(ChooseVictim(b.index, false).has_value());
  b.index.Unpin(s);
  ASSERT_TRUE(ChooseVictim(b.index, true).has_value());
  EXPECT_EQ(ChooseVictim(b.index, true)->id, s);
}

TEST(EvictionTest, DenseEvictsLeavesOnlyLowestPriorityThenOldest) {
  IndexBuilder b;
  const PayloadId a1 = b.Block(kRootId, Ids(0), /*priority=*/-100);  // shared prefix
  const PayloadId a2 = b.Block(a1, Ids(4), /*priority=*/5);
  const PayloadId b2 = b.Block(a1, Ids(20), /*priority=*/5);
  const PayloadId c2 = b.Block(a1, Ids(40), /*priority=*/3);
  b.Snap(c2, {44}, /*priority=*/8);  // a tail record makes c2 interior
  std::optional<Victim> victim = ChooseVictim(b.index, /*has_recurrent_state=*/false);
  ASSERT_TRUE(victim.has_value());
  EXPECT_EQ(victim->id, a2);  // ties go to the oldest
  EXPECT_EQ(victim->reason, EvictReason::kLowValue);
  b.index.RemoveLeafBlock(a2);
  EXPECT_EQ(ChooseVictim(b.index, false)->id, b2);
  b.index.RemoveLeafBlock(b2);
  EXPECT_NE(ChooseVictim(b.index, false)->id, a1);
}

TEST(EvictionTest, ValueGrowsWithTokensPerByteAndUse) {
  EXPECT_GT(RecordValue(200, 1000, 0, 1.0), RecordValue(100, 1000, 0, 1.0));
  EXPECT_GT(RecordValue(100, 500, 0, 1.0), RecordValue(100, 1000, 0, 1.0));
  EXPECT_DOUBLE_EQ(RecordValue(100, 1000, 3, 1.0), 4 * RecordValue(100, 1000, 0, 1.0));
  EXPECT_LT(KindWeight(SnapshotKind::kInterval), KindWeight(SnapshotKind::kMessageBoundary));
  EXPECT_LT(KindWeight(SnapshotKind::kInterrupted), KindWeight(SnapshotKind::kGenerationEnd));
}

CacheOptions SmallHybrid(int64_t budget) {
  CacheOptions options;
  options.block_tokens = kBlock;
  options.budget_bytes = budget;
  return options;
}

StatusOr<InsertResult> Snap(PrefixCache* cache, const std::vector<int32_t>& tokens) {
  return cache->Insert(tokens, InsertSpec{40, SnapshotSpec{SnapshotKind::kGenerationEnd, 100}});
}

TEST(EvictionTest, RecentlyUsedConversationOutlivesAnIdleOne) {
  PrefixCache cache(SmallHybrid(300));
  const std::vector<int32_t> a = Ids(100, 6);
  const std::vector<int32_t> b = Ids(200, 6);
  ASSERT_TRUE(Snap(&cache, a).ok());
  ASSERT_TRUE(Snap(&cache, b).ok());
  std::vector<int32_t> next_a = a;
  next_a.push_back(1);
  EXPECT_EQ(cache.Lookup(next_a).resume_tokens, 6);
  ASSERT_TRUE(Snap(&cache, Ids(300, 6)).ok());  // 420 bytes: one conversation must go
  EXPECT_EQ(cache.Lookup(next_a).resume_tokens, 6);
  std::vector<int32_t> next_b = b;
  next_b.push_back(1);
  EXPECT_EQ(cache.Lookup(next_b).resume_tokens, 0);
  cache.CheckInvariants();
}

TEST(EvictionTest, SharedPrefixSnapshotSurvivesChurningSessions) {
  PrefixCache cache(SmallHybrid(1200));
  const std::vector<int32_t> system = Ids(1000, 10);
  ASSERT_TRUE(Snap(&cache, system).ok());
  std::vector<int32_t> x = system;
  std::vector<int32_t> y = system;
  for (int turn = 0; turn < 12; ++turn) {
    x.push_back(2000 + turn);
    y.push_back(3000 + turn);
    ASSERT_TRUE(Snap(&cache, x).ok());
    ASSERT_TRUE(Snap(&cache, y).ok());
    cache.CheckInvariants();
  }
  EXPECT_GT(cache.stats().evictions[static_cast<int>(EvictReason::kLowValue)], 0);
  std::vector<int32_t> z = system;
  z.push_back(4000);
  EXPECT_EQ(cache.Lookup(z).resume_tokens, 10) << "the shared system prompt is a branch point";
  x.push_back(5000);
  EXPECT_EQ(cache.Lookup(x).resume_tokens, 22) << "each session's newest state is a tail";
}

}  // namespace
}  // namespace ds::cache
