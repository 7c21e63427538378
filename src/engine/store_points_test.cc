#include "engine/store_points.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace ds::engine {
namespace {

using cache::SnapshotKind;

std::vector<std::pair<int64_t, SnapshotKind>> Flat(const std::vector<StorePoint>& points) {
  std::vector<std::pair<int64_t, SnapshotKind>> out;
  for (const StorePoint& p : points) out.emplace_back(p.position, p.kind);
  return out;
}

TEST(StorePointsTest, HybridStopsAtBoundariesIntervalsBeforeTheLastTokenAndTheEnd) {
  const std::vector<int64_t> boundaries = {30, 100, 200, 250, 250};
  EXPECT_EQ(Flat(PlanStorePoints(boundaries, 250, 0, 100, true)),
            (std::vector<std::pair<int64_t, SnapshotKind>>{
                {30, SnapshotKind::kMessageBoundary},
                {100, SnapshotKind::kMessageBoundary},  // outranks the interval point at 100
                {200, SnapshotKind::kMessageBoundary},
                {249, SnapshotKind::kPromptEnd},  // an exact repeat of the prompt resumes here
                {250, SnapshotKind::kMessageBoundary}}));
  // Nothing at or before the restored prefix, nothing past the prompt.
  EXPECT_EQ(Flat(PlanStorePoints({{10, 40, 400}}, 300, 40, 128, true)),
            (std::vector<std::pair<int64_t, SnapshotKind>>{{128, SnapshotKind::kInterval},
                                                           {256, SnapshotKind::kInterval},
                                                           {299, SnapshotKind::kPromptEnd},
                                                           {300, SnapshotKind::kPromptEnd}}));
  EXPECT_EQ(Flat(PlanStorePoints({}, 50, 0, 0, true)),
            (std::vector<std::pair<int64_t, SnapshotKind>>{{49, SnapshotKind::kPromptEnd},
                                                           {50, SnapshotKind::kPromptEnd}}));
  // Resumed just before the last token (an exact repeat): only the end is left to store.
  EXPECT_EQ(Flat(PlanStorePoints({}, 50, 49, 0, true)),
            (std::vector<std::pair<int64_t, SnapshotKind>>{{50, SnapshotKind::kPromptEnd}}));
}

// A divergence anywhere in a long prompt recomputes at most max(spacing, d / 8) tokens: Claude
// Code rewrites a line of its system prompt at token 1.5k-3k when the model changes, and the
// first point used to be at 4096.
TEST(StorePointsTest, IntervalPointsBoundTheRecomputeBeforeAnyDivergence) {
  for (int64_t spacing : {256, 512, 1000}) {
    const std::vector<int64_t> points = IntervalPoints(spacing, 300'000);
    ASSERT_FALSE(points.empty());
    EXPECT_EQ(points.front(), spacing);
    for (int64_t d = 0; d < 300'000; d += 97) {
      auto after = std::upper_bound(points.begin(), points.end(), d);
      const int64_t restorable = after == points.begin() ? 0 : *(after - 1);
      ASSERT_LE(d - restorable, std::max(spacing, d / 8)) << "spacing " << spacing << " d " << d;
    }
  }
  // Logarithmic in the prompt's length.
  EXPECT_EQ(IntervalPoints(512, 131'072).size(), 40u);
  EXPECT_EQ(IntervalPoints(512, 262'144).size(), 46u);
  EXPECT_EQ(IntervalPoints(512, 2048), (std::vector<int64_t>{512, 1024, 1536}));
  EXPECT_TRUE(IntervalPoints(0, 100'000).empty());
}

TEST(StorePointsTest, DenseStoresAtTheEndOnly) {
  EXPECT_EQ(Flat(PlanStorePoints({{30, 100}}, 250, 0, 100, false)),
            (std::vector<std::pair<int64_t, SnapshotKind>>{{250, SnapshotKind::kPromptEnd}}));
  EXPECT_TRUE(PlanStorePoints({}, 250, 250, 100, false).empty());
}

}  // namespace
}  // namespace ds::engine
