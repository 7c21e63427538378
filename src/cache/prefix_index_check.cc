// PrefixIndex::CheckInvariants: the structural audit run by tests (and available to a debug
// endpoint). Kept apart from the mutating code so each file reads on its own.
#include <algorithm>

#include "base/check.h"
#include "cache/prefix_index.h"

namespace ds::cache {
namespace {

bool Contains(const std::vector<PayloadId>& ids, PayloadId id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

}  // namespace

void PrefixIndex::CheckBlock(PayloadId id, const BlockNode& node) const {
  int64_t subtree = static_cast<int64_t>(node.snapshots.size());
  for (PayloadId child_id : node.children) {
    const BlockNode& child = Get(blocks_, child_id);
    DS_CHECK_MSG(child.parent == id, "child does not point back to its parent");
    subtree += child.subtree_snapshots;
  }
  DS_CHECK_MSG(node.subtree_snapshots == subtree, "subtree snapshot count is stale");
  for (PayloadId snapshot_id : node.snapshots) {
    DS_CHECK_MSG(Get(snapshots_, snapshot_id).node == id, "snapshot listed under another node");
  }
  auto key_it = by_key_.find(node.key);
  DS_CHECK_MSG(key_it != by_key_.end() && key_it->second == id, "key map out of sync");
  if (id == kRootId) {
    DS_CHECK(node.depth == 0 && node.ids.empty() && node.meta.bytes == 0);
    return;
  }
  const BlockNode& parent = Get(blocks_, node.parent);
  DS_CHECK_MSG(parent.depth + 1 == node.depth, "depth is not parent depth + 1");
  DS_CHECK_MSG(Contains(parent.children, id), "parent does not list the block");
  DS_CHECK_MSG(static_cast<int64_t>(node.ids.size()) == block_tokens_, "block is not full");
  DS_CHECK_MSG(ChildKey(parent.key, node.ids) == node.key, "key is not the chain hash");
  DS_CHECK_MSG(node.meta.pins == 0 || node.parent == kRootId || parent.meta.pins > 0,
               "pinned block under an unpinned parent");
}

void PrefixIndex::CheckInvariants() const {
  DS_CHECK(blocks_.contains(kRootId));
  DS_CHECK_MSG(by_key_.size() == blocks_.size(), "key map out of sync");
  int64_t used = 0;
  int64_t pinned = 0;
  int64_t block_bytes = 0;
  for (const auto& [id, node] : blocks_) {
    CheckBlock(id, node);
    used += node.meta.bytes;
    block_bytes += node.meta.bytes;
    if (node.meta.pins > 0) pinned += node.meta.bytes;
  }
  std::array<int64_t, kNumSnapshotKinds> count{};
  std::array<int64_t, kNumSnapshotKinds> bytes{};
  for (const auto& [id, record] : snapshots_) {
    const BlockNode& node = Get(blocks_, record.node);
    DS_CHECK_MSG(Contains(node.snapshots, id), "node does not list the snapshot");
    DS_CHECK_MSG(static_cast<int64_t>(record.tail.size()) < block_tokens_, "tail too long");
    DS_CHECK_MSG(
        record.position == node.depth * block_tokens_ + static_cast<int64_t>(record.tail.size()),
        "snapshot position does not match its node and tail");
    DS_CHECK_MSG(record.meta.pins == 0 || record.node == kRootId || node.meta.pins > 0,
                 "pinned snapshot under an unpinned block");
    used += record.meta.bytes;
    if (record.meta.pins > 0) pinned += record.meta.bytes;
    count[Index(record.kind)] += 1;
    bytes[Index(record.kind)] += record.meta.bytes;
  }
  DS_CHECK_MSG(used == used_bytes_, "used bytes out of sync");
  DS_CHECK_MSG(pinned == pinned_bytes_, "pinned bytes out of sync");
  DS_CHECK_MSG(block_bytes == block_bytes_, "block bytes out of sync");
  DS_CHECK_MSG(count == snapshot_count_ && bytes == snapshot_bytes_, "per-kind stats out of sync");
}

}  // namespace ds::cache
