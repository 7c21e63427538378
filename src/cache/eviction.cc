#include "cache/eviction.h"

#include <algorithm>
#include <span>
#include <tuple>
#include <vector>

namespace ds::cache {
namespace {

constexpr double kBytesPerMiB = 1024.0 * 1024.0;

bool StartsWith(std::span<const int32_t> ids, std::span<const int32_t> prefix) {
  return ids.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), ids.begin());
}

class VictimPicker {
 public:
  void Offer(PayloadId id, EvictReason reason, double priority) {
    const auto key = std::make_tuple(static_cast<int>(reason), priority, id);
    if (!best_ || key < best_key_) {
      best_ = Victim{id, reason, priority};
      best_key_ = key;
    }
  }
  std::optional<Victim> best() const { return best_; }

 private:
  std::optional<Victim> best_;
  std::tuple<int, double, PayloadId> best_key_;
};

}  // namespace

double KindWeight(SnapshotKind kind) {
  switch (kind) {
    case SnapshotKind::kInterval:
      return 0.5;
    case SnapshotKind::kInterrupted:
      return 0.25;
    case SnapshotKind::kMessageBoundary:
    case SnapshotKind::kPromptEnd:
    case SnapshotKind::kGenerationEnd:
      return 1.0;
  }
  return 1.0;
}

double RecordValue(int64_t saved_tokens, int64_t bytes, int64_t hits, double weight) {
  return weight * static_cast<double>(1 + hits) * static_cast<double>(saved_tokens) * kBytesPerMiB /
         static_cast<double>(bytes);
}

int CountContinuations(const PrefixIndex& index, const SnapshotRecord& snapshot) {
  const std::span<const int32_t> tail = snapshot.tail;
  std::vector<int32_t> next_tokens;
  const BlockNode& node = index.block(snapshot.node);
  for (PayloadId id : node.snapshots) {
    const SnapshotRecord& other = index.snapshot(id);
    if (other.tail.size() > tail.size() && StartsWith(other.tail, tail)) {
      next_tokens.push_back(other.tail[tail.size()]);
    }
  }
  for (PayloadId id : node.children) {
    const BlockNode& child = index.block(id);
    if (child.subtree_snapshots > 0 && StartsWith(child.ids, tail)) {
      next_tokens.push_back(child.ids[tail.size()]);
    }
  }
  std::sort(next_tokens.begin(), next_tokens.end());
  return static_cast<int>(std::unique(next_tokens.begin(), next_tokens.end()) -
                          next_tokens.begin());
}

std::optional<Victim> ChooseVictim(const PrefixIndex& index, bool has_recurrent_state) {
  VictimPicker picker;
  for (const auto& [id, node] : index.blocks()) {
    if (id == kRootId || node.meta.pins > 0) continue;
    if (has_recurrent_state) {
      if (node.subtree_snapshots == 0) {
        picker.Offer(id, EvictReason::kUselessKv, node.meta.priority);
      }
    } else if (node.children.empty() && node.snapshots.empty()) {
      picker.Offer(id, EvictReason::kLowValue, node.meta.priority);
    }
  }
  for (const auto& [id, record] : index.snapshots()) {
    if (record.meta.pins > 0) continue;
    EvictReason reason = EvictReason::kLowValue;
    if (has_recurrent_state && CountContinuations(index, record) != 1) {
      reason = EvictReason::kProtected;
    }
    picker.Offer(id, reason, record.meta.priority);
  }
  return picker.best();
}

}  // namespace ds::cache
