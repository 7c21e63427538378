#include "engine/store_points.h"

#include <algorithm>

namespace ds::engine {

std::vector<int64_t> IntervalPoints(int64_t spacing, int64_t end) {
  std::vector<int64_t> points;
  for (int64_t position = spacing; spacing > 0 && position < end;
       position += std::max(spacing, position / 8 / spacing * spacing)) {
    points.push_back(position);
  }
  return points;
}

std::vector<StorePoint> PlanStorePoints(std::span<const int64_t> boundaries, int64_t n_prompt,
                                        int64_t resumed, int64_t spacing,
                                        bool has_recurrent_state) {
  std::vector<StorePoint> points;
  if (has_recurrent_state) {
    for (int64_t position : boundaries) {
      points.push_back({position, cache::SnapshotKind::kMessageBoundary});
    }
    for (int64_t position : IntervalPoints(spacing, n_prompt)) {
      points.push_back({position, cache::SnapshotKind::kInterval});
    }
    // A request must compute at least one token to get logits, so an exact repeat of this
    // prompt (a retry, a regenerate, a probe) can only resume before its last token.
    points.push_back({n_prompt - 1, cache::SnapshotKind::kPromptEnd});
  }
  points.push_back({n_prompt, cache::SnapshotKind::kPromptEnd});
  std::erase_if(points, [&](const StorePoint& point) {
    return point.position <= resumed || point.position > n_prompt;
  });
  std::stable_sort(points.begin(), points.end(), [](const StorePoint& a, const StorePoint& b) {
    return a.position < b.position;
  });
  points.erase(std::unique(points.begin(), points.end(),
                           [](const StorePoint& a, const StorePoint& b) {
                             return a.position == b.position;
                           }),
               points.end());
  return points;
}

}  // namespace ds::engine
