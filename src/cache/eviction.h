// Eviction policy: which record leaves next when the cache is over budget. Pure functions over
// the index; the cache (prefix_cache.h) applies them. Thread-safe as far as the index is.
//
// Classes, tried in order (EvictReason):
//  1. kUselessKv (hybrid only): a block whose subtree holds no snapshot. Nothing at or past its
//     end can be resumed, so it and its subtree go first and together.
//  2. kLowValue: hybrid: a snapshot that is neither a conversation tail nor a branch point.
//     Dense: a leaf block or a tail record; interior blocks become leaves first, so prefixes
//     shared by many sequences go last.
//  3. kProtected (hybrid): a conversation tail (no deeper snapshot continues its path: the newest
//     state of a conversation) or a branch point (two or more continuations below it still hold
//     snapshots, e.g. the end of a system prompt shared by several sessions).
// Blocks with a snapshot past them are never victims themselves: they become useless when the
// last such snapshot goes. Pinned records are never victims. So the index stays prefix-closed.
//
// Within a class: lowest priority first, then the oldest id. Priority is GDSF
// (Greedy-Dual-Size-Frequency): priority = clock + value on insert and on every use, with
// value = kind weight * (1 + hits) * tokens saved per MiB. The clock rises to each victim's
// priority, so a record untouched since the clock passed it goes before a freshly used one
// (recency), and among equally recent ones the record saving the fewest tokens per byte goes.
#pragma once

#include <cstdint>
#include <optional>

#include "cache/prefix_index.h"
#include "cache/types.h"

namespace ds::cache {

// Interval points are speculative and interrupted requests rarely come back the same way; the
// points a conversation returns to weigh 1.
double KindWeight(SnapshotKind kind);

// Tokens a record saves per MiB it holds, scaled by weight and use. saved_tokens is what losing
// the record costs: block tokens for a block, the distance to the previous resume point on the
// path for a snapshot.
double RecordValue(int64_t saved_tokens, int64_t bytes, int64_t hits, double weight);

// Distinct next tokens past `snapshot` along which some deeper snapshot is cached:
// 0 = a conversation tail, 1 = an inner point of one conversation, >= 2 = a branch point.
int CountContinuations(const PrefixIndex& index, const SnapshotRecord& snapshot);

struct Victim {
  PayloadId id = 0;  // a block (with its whole subtree) or a snapshot
  EvictReason reason = EvictReason::kLowValue;
  double priority = 0;
};

// The next record to evict, or nullopt when everything left is pinned.
std::optional<Victim> ChooseVictim(const PrefixIndex& index, bool has_recurrent_state);

}  // namespace ds::cache
