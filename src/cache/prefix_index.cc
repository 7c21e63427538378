#include "cache/prefix_index.h"

#include <algorithm>
#include <string>

#include "base/check.h"
#include "cache/chain_hash.h"

namespace ds::cache {
namespace {

// XORed into a node key before hashing a snapshot tail, so snapshot keys never name a block.
constexpr uint64_t kSnapshotDomain = 0x736e617073686f74;  // "snapshot"

bool SameIds(std::span<const int32_t> a, std::span<const int32_t> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

void Erase(std::vector<PayloadId>* ids, PayloadId id) {
  auto it = std::find(ids->begin(), ids->end(), id);
  DS_CHECK(it != ids->end());
  ids->erase(it);
}

}  // namespace

PrefixIndex::PrefixIndex(int64_t block_tokens, uint64_t seed, ChainHashFn hash)
    : block_tokens_(block_tokens), seed_(seed), hash_(hash != nullptr ? hash : Xxh3ChainHash) {
  DS_CHECK(block_tokens_ > 0);
  BlockNode root;
  root.key = hash_(Hash128{}, {}, seed_);
  by_key_.emplace(root.key, kRootId);
  blocks_.emplace(kRootId, std::move(root));
}

PrefixIndex::Walk PrefixIndex::WalkBlocks(std::span<const int32_t> tokens) const {
  Walk walk;
  walk.path.push_back(kRootId);
  const BlockNode* node = &Get(blocks_, kRootId);
  const auto num_full = static_cast<int64_t>(tokens.size()) / block_tokens_;
  for (int64_t k = 0; k < num_full; ++k) {
    std::span<const int32_t> ids = tokens.subspan(k * block_tokens_, block_tokens_);
    walk.has_next = true;
    walk.next_key = ChildKey(node->key, ids);
    auto it = by_key_.find(walk.next_key);
    if (it == by_key_.end()) return walk;
    const BlockNode& child = Get(blocks_, it->second);
    if (child.parent != walk.path.back() || !SameIds(child.ids, ids)) {
      walk.collision = true;
      return walk;
    }
    walk.path.push_back(it->second);
    node = &child;
    walk.has_next = false;
  }
  return walk;
}

PayloadId PrefixIndex::AddBlock(PayloadId parent, const Hash128& key, std::span<const int32_t> ids,
                                int64_t bytes) {
  DS_CHECK(static_cast<int64_t>(ids.size()) == block_tokens_);
  DS_CHECK(bytes > 0);
  DS_CHECK(!by_key_.contains(key));
  BlockNode& parent_node = Get(blocks_, parent);
  const PayloadId id = next_id_++;
  BlockNode node;
  node.key = key;
  node.parent = parent;
  node.depth = parent_node.depth + 1;
  node.ids.assign(ids.begin(), ids.end());
  node.meta.bytes = bytes;
  parent_node.children.push_back(id);
  by_key_.emplace(key, id);
  blocks_.emplace(id, std::move(node));
  used_bytes_ += bytes;
  block_bytes_ += bytes;
  return id;
}

PayloadId PrefixIndex::AddSnapshot(PayloadId node, std::span<const int32_t> tail, SnapshotKind kind,
                                   int64_t bytes) {
  DS_CHECK(static_cast<int64_t>(tail.size()) < block_tokens_);
  DS_CHECK(bytes > 0);
  DS_CHECK(!FindSnapshot(node, tail).has_value());
  BlockNode& block_node = Get(blocks_, node);
  const PayloadId id = next_id_++;
  SnapshotRecord record;
  record.node = node;
  record.position = block_node.depth * block_tokens_ + static_cast<int64_t>(tail.size());
  record.tail.assign(tail.begin(), tail.end());
  record.kind = kind;
  record.meta.bytes = bytes;
  block_node.snapshots.push_back(id);
  snapshots_.emplace(id, std::move(record));
  AddSubtreeSnapshots(node, 1);
  used_bytes_ += bytes;
  snapshot_count_[Index(kind)] += 1;
  snapshot_bytes_[Index(kind)] += bytes;
  return id;
}

std::optional<PayloadId> PrefixIndex::FindSnapshot(PayloadId node,
                                                   std::span<const int32_t> tail) const {
  for (PayloadId id : Get(blocks_, node).snapshots) {
    if (SameIds(Get(snapshots_, id).tail, tail)) return id;
  }
  return std::nullopt;
}

void PrefixIndex::RemoveSnapshot(PayloadId id) {
  const SnapshotRecord& record = Get(snapshots_, id);
  DS_CHECK(record.meta.pins == 0);
  Erase(&Get(blocks_, record.node).snapshots, id);
  AddSubtreeSnapshots(record.node, -1);
  used_bytes_ -= record.meta.bytes;
  snapshot_count_[Index(record.kind)] -= 1;
  snapshot_bytes_[Index(record.kind)] -= record.meta.bytes;
  snapshots_.erase(id);
}

void PrefixIndex::RemoveLeafBlock(PayloadId id) {
  DS_CHECK(id != kRootId);
  const BlockNode& node = Get(blocks_, id);
  DS_CHECK(node.meta.pins == 0 && node.children.empty() && node.snapshots.empty());
  Erase(&Get(blocks_, node.parent).children, id);
  by_key_.erase(node.key);
  used_bytes_ -= node.meta.bytes;
  block_bytes_ -= node.meta.bytes;
  blocks_.erase(id);
}

const BlockNode& PrefixIndex::block(PayloadId id) const { return Get(blocks_, id); }

const SnapshotRecord& PrefixIndex::snapshot(PayloadId id) const { return Get(snapshots_, id); }

RecordMeta& PrefixIndex::meta(PayloadId id) {
  if (auto it = blocks_.find(id); it != blocks_.end()) return it->second.meta;
  return Get(snapshots_, id).meta;
}

const RecordMeta& PrefixIndex::meta(PayloadId id) const {
  if (auto it = blocks_.find(id); it != blocks_.end()) return it->second.meta;
  return Get(snapshots_, id).meta;
}

void PrefixIndex::Pin(PayloadId id) {
  RecordMeta& m = meta(id);
  if (m.pins++ == 0) pinned_bytes_ += m.bytes;
}

void PrefixIndex::Unpin(PayloadId id) {
  RecordMeta& m = meta(id);
  DS_CHECK(m.pins > 0);
  if (--m.pins == 0) pinned_bytes_ -= m.bytes;
}

Hash128 PrefixIndex::ChildKey(const Hash128& parent_key, std::span<const int32_t> ids) const {
  return hash_(parent_key, ids, seed_);
}

Hash128 PrefixIndex::SnapshotKey(const SnapshotRecord& snapshot) const {
  Hash128 base = Get(blocks_, snapshot.node).key;
  base.low ^= kSnapshotDomain;
  return hash_(base, snapshot.tail, seed_);
}

void PrefixIndex::AddSubtreeSnapshots(PayloadId node, int64_t delta) {
  for (PayloadId id = node;; id = Get(blocks_, id).parent) {
    Get(blocks_, id).subtree_snapshots += delta;
    if (id == kRootId) break;
  }
}

}  // namespace ds::cache
