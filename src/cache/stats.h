// Counters of the cache for metrics and logs. A plain value, read through PrefixCache::stats().
#pragma once

#include <array>
#include <cstdint>

#include "cache/types.h"

namespace ds::cache {

struct CacheStats {
  int64_t budget_bytes = 0;
  int64_t used_bytes = 0;    // blocks + snapshots; <= budget_bytes after every Insert
  int64_t pinned_bytes = 0;  // held by leases
  int64_t num_blocks = 0;
  int64_t block_bytes = 0;
  std::array<int64_t, kNumSnapshotKinds> num_snapshots{};   // by SnapshotKind
  std::array<int64_t, kNumSnapshotKinds> snapshot_bytes{};  // by SnapshotKind

  int64_t lookups = 0;
  int64_t hits = 0;                                          // lookups resuming past token 0
  int64_t resumed_tokens = 0;                                // sum of resume positions
  std::array<int64_t, kNumResumeLimits> lookups_by_limit{};  // by ResumeLimit

  int64_t inserts = 0;
  int64_t inserts_refused = 0;  // larger than the budget even with everything unpinned evicted
  int64_t hash_collisions = 0;  // inserts stopped at a key held by other ids
  std::array<int64_t, kNumEvictReasons> evictions{};      // records, by EvictReason
  std::array<int64_t, kNumEvictReasons> evicted_bytes{};  // by EvictReason
  int64_t ghosts = 0;  // evicted records remembered for miss diagnostics
};

}  // namespace ds::cache
