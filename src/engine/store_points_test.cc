#include "engine/store_points.h"

#include <gtest/gtest.h>

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

TEST(StorePointsTest, DenseStoresAtTheEndOnly) {
  EXPECT_EQ(Flat(PlanStorePoints({{30, 100}}, 250, 0, 100, false)),
            (std::vector<std::pair<int64_t, SnapshotKind>>{{250, SnapshotKind::kPromptEnd}}));
  EXPECT_TRUE(PlanStorePoints({}, 250, 250, 100, false).empty());
}

}  // namespace
}  // namespace ds::engine
