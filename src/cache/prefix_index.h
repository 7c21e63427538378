// The structure of the cache: a tree of KV blocks keyed by chained hashes, with snapshot records
// hanging off the block that ends at or before them. Metadata only; payload bytes live elsewhere.
//
// Invariants (CheckInvariants() verifies them all):
//  - prefix-closed: every block's parent and every snapshot's node is present, so anything in
//    the index can be reconstructed from the root;
//  - verified: WalkBlocks follows a key only when the stored ids and parent match the tokens;
//    keys are unique, so a colliding key blocks its prefix instead of aliasing it;
//  - a snapshot at position p hangs off the block node of depth floor(p / B) and stores the
//    tail ids [floor(p / B) * B, p), fewer than B of them;
//  - subtree_snapshots of a block counts the snapshots at it and below it;
//  - pins are chain-closed: a record is pinned only while all its ancestor blocks are pinned
//    (callers pin whole paths), so an unpinned block never has a pinned descendant.
// Not thread-safe: the engine thread owns it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "base/check.h"
#include "cache/types.h"

namespace ds::cache {

// Bookkeeping shared by blocks and snapshots.
struct RecordMeta {
  int64_t bytes = 0;    // declared payload size
  int32_t pins = 0;     // leases and in-progress inserts holding it
  int64_t hits = 0;     // lookups that resumed through it
  double priority = 0;  // GDSF priority; lower is evicted first (eviction.h)
};

struct BlockNode {
  Hash128 key;                       // H_depth
  PayloadId parent = 0;              // the root for the first block
  int64_t depth = 0;                 // covers tokens [(depth - 1) * B, depth * B); the root is 0
  std::vector<int32_t> ids;          // [B] token ids; empty for the root
  std::vector<PayloadId> children;   // blocks of depth + 1
  std::vector<PayloadId> snapshots;  // positions in [depth * B, (depth + 1) * B)
  int64_t subtree_snapshots = 0;     // at this node and below
  RecordMeta meta;
};

struct SnapshotRecord {
  PayloadId node = 0;         // block of depth floor(position / B)
  int64_t position = 0;       // tokens covered: state after tokens [0, position)
  std::vector<int32_t> tail;  // ids [node.depth * B, position)
  SnapshotKind kind = SnapshotKind::kMessageBoundary;
  RecordMeta meta;
};

// Id of the root node (the empty prefix). It has no payload and is never evicted.
inline constexpr PayloadId kRootId = 0;

class PrefixIndex {
 public:
  PrefixIndex(int64_t block_tokens, uint64_t seed, ChainHashFn hash);

  int64_t block_tokens() const { return block_tokens_; }

  struct Walk {
    std::vector<PayloadId> path;  // path[0] = root, path[k] = cached block k
    bool has_next = false;        // the tokens hold one more full block past the path
    Hash128 next_key;             // its key (valid when has_next)
    bool collision = false;       // next_key is taken by a block with other ids or parent
  };
  // Follows the full blocks of `tokens` as deep as they are cached.
  Walk WalkBlocks(std::span<const int32_t> tokens) const;

  // REQUIRES: parent present with depth + 1 == the new block's depth; key absent; ids.size() == B.
  PayloadId AddBlock(PayloadId parent, const Hash128& key, std::span<const int32_t> ids,
                     int64_t bytes);
  // REQUIRES: node present; tail.size() < B; FindSnapshot(node, tail) is empty.
  PayloadId AddSnapshot(PayloadId node, std::span<const int32_t> tail, SnapshotKind kind,
                        int64_t bytes);
  std::optional<PayloadId> FindSnapshot(PayloadId node, std::span<const int32_t> tail) const;
  // REQUIRES: present and unpinned.
  void RemoveSnapshot(PayloadId id);
  // REQUIRES: not the root, unpinned, no children and no snapshots.
  void RemoveLeafBlock(PayloadId id);

  bool IsBlock(PayloadId id) const { return blocks_.contains(id); }
  bool IsSnapshot(PayloadId id) const { return snapshots_.contains(id); }
  // REQUIRES: present.
  const BlockNode& block(PayloadId id) const;
  const SnapshotRecord& snapshot(PayloadId id) const;
  RecordMeta& meta(PayloadId id);
  const RecordMeta& meta(PayloadId id) const;
  const std::unordered_map<PayloadId, BlockNode>& blocks() const { return blocks_; }
  const std::unordered_map<PayloadId, SnapshotRecord>& snapshots() const { return snapshots_; }

  // REQUIRES: present; Pin only with every ancestor pinned (or pinned in the same pass).
  void Pin(PayloadId id);
  void Unpin(PayloadId id);

  Hash128 ChildKey(const Hash128& parent_key, std::span<const int32_t> ids) const;
  // Key naming a snapshot record: its node's key and its tail, in a domain apart from blocks.
  Hash128 SnapshotKey(const SnapshotRecord& snapshot) const;

  int64_t used_bytes() const { return used_bytes_; }
  int64_t pinned_bytes() const { return pinned_bytes_; }
  int64_t num_blocks() const { return static_cast<int64_t>(blocks_.size()) - 1; }
  int64_t block_bytes() const { return block_bytes_; }
  int64_t num_snapshots(SnapshotKind kind) const { return snapshot_count_[Index(kind)]; }
  int64_t snapshot_bytes(SnapshotKind kind) const { return snapshot_bytes_[Index(kind)]; }

  // Aborts with a message when any invariant in the header comment is broken. O(size).
  void CheckInvariants() const;

 private:
  static size_t Index(SnapshotKind kind) { return static_cast<size_t>(kind); }
  // The record `id` of `map`. REQUIRES: present.
  template <typename Map>
  static auto& Get(Map& map, PayloadId id) {
    auto it = map.find(id);
    DS_CHECK_MSG(it != map.end(), "unknown cache record");
    return it->second;
  }
  void AddSubtreeSnapshots(PayloadId node, int64_t delta);
  void CheckBlock(PayloadId id, const BlockNode& node) const;

  int64_t block_tokens_;
  uint64_t seed_;
  ChainHashFn hash_;
  PayloadId next_id_ = kRootId + 1;
  std::unordered_map<PayloadId, BlockNode> blocks_;  // includes the root
  std::unordered_map<PayloadId, SnapshotRecord> snapshots_;
  std::unordered_map<Hash128, PayloadId, Hash128Hasher> by_key_;
  int64_t used_bytes_ = 0;
  int64_t pinned_bytes_ = 0;
  int64_t block_bytes_ = 0;
  std::array<int64_t, kNumSnapshotKinds> snapshot_count_{};
  std::array<int64_t, kNumSnapshotKinds> snapshot_bytes_{};
};

}  // namespace ds::cache
