// PrefixCache: the pure cache core. It maps token-id prefixes to the records that rebuild the
// inference state there, and decides what to evict. It never sees tensors or payload bytes: each
// record is metadata + a PayloadId + a declared size, and the engine keeps the bytes.
//
// State at position p = attention KV for tokens [0, p) + (hybrid) recurrent state at exactly p.
//  - KV block j (B = block_tokens): KV rows [j*B, (j+1)*B), keyed by the chained hash H_j.
//  - Snapshot at p (any p): recurrent state at p (hybrid only) + KV rows [floor(p/B)*B, p) +
//    those tail ids. For dense models (has_recurrent_state = false) it is a "tail record": KV
//    rows only; any cached KV prefix is resumable there, so snapshots are optional.
// Lookup returns the deepest resume point (resume_plan.h); Insert adds what is missing and
// evicts by value to stay within budget_bytes (eviction.h).
//
// Payload contract with the engine:
//  - Insert returns the PayloadIds the engine must fill; it stores their bytes before its next
//    call into the cache. The bytes of a PayloadId never change afterwards (ids are not reused).
//  - The cache never hands out anything mutable: a restore copies payload bytes into a sequence.
//  - The eviction listener runs inside Insert for each evicted record; the engine frees its bytes
//    there (or hands them to a disk tier). It must not call back into the cache.
//  - A Match's lease pins its records until released; pinned records are never evicted.
//
// Thread safety: none. The engine thread owns the cache; leases are released on that thread.
// Cost: Lookup and Insert are O(path blocks + records on the path); each eviction scans all
// records once (O(records)), which stays small because every record holds >= 1 byte of budget.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "base/status.h"
#include "cache/eviction.h"
#include "cache/ghosts.h"
#include "cache/lease.h"
#include "cache/prefix_index.h"
#include "cache/resume_plan.h"
#include "cache/stats.h"
#include "cache/types.h"

namespace ds::cache {

struct LookupOptions {
  // Restore guard: resume only at points whose records sum to at most this many declared bytes;
  // a deeper point that does not fit falls back to a shallower one (ResumeLimit::kRestoreGuard).
  int64_t max_restore_bytes = std::numeric_limits<int64_t>::max();
};

// KV block j of a match: rows [j * B, (j + 1) * B).
struct BlockRef {
  PayloadId payload = 0;
  int64_t bytes = 0;
};

// The record that finishes a restore after the whole blocks.
struct TailRef {
  PayloadId payload = 0;
  int64_t bytes = 0;
  int64_t begin_tokens = 0;  // blocks.size() * B
  int64_t num_rows = 0;      // KV rows to copy: [begin_tokens, resume_tokens)
  int64_t record_rows = 0;   // rows the record holds; > num_rows only for dense models
  // A snapshot or tail record, whose payload starts with its KV rows (hybrid: followed by the
  // recurrent state at resume_tokens). False: a KV block read partially (dense only).
  bool is_snapshot = false;
};

struct Match {
  int64_t resume_tokens = 0;  // r: restore, then compute tokens [r, tokens.size())
  std::vector<BlockRef> blocks;
  std::optional<TailRef> tail;  // always set for a hybrid hit (it carries the recurrent state)
  int64_t restore_bytes = 0;    // declared bytes of blocks and tail
  // Diagnostics: the longest prefix shared with anything cached, even where nothing resumes, and
  // the cached token at that index when a cached sequence goes on differently (else kNoToken).
  int64_t longest_match_tokens = 0;
  // The cached ids from the divergence on (at most kDivergenceWindowTokens, within one record);
  // empty when no cached sequence goes on differently.
  std::vector<int32_t> cached_window;
  int32_t cached_token_at_divergence() const {
    return cached_window.empty() ? kNoToken : cached_window.front();
  }
  ResumeLimit limit = ResumeLimit::kNothingCached;
  Lease lease;  // pins the records above; release once their bytes are copied
};

struct SnapshotSpec {
  SnapshotKind kind = SnapshotKind::kMessageBoundary;
  int64_t bytes = 0;  // declared payload size; REQUIRES > 0
};

struct InsertSpec {
  int64_t block_bytes = 0;  // declared size of each KV block payload; REQUIRES > 0
  // A snapshot at tokens.size(). REQUIRED for hybrid models (blocks alone cannot be resumed).
  // Dense models store it only when tokens.size() is not a multiple of B.
  std::optional<SnapshotSpec> snapshot;
};

struct NewBlock {
  int64_t index = 0;  // the engine stores KV rows [index * B, (index + 1) * B)
  PayloadId payload = 0;
};

struct InsertResult {
  std::vector<NewBlock> new_blocks;  // ascending index
  PayloadId new_snapshot = 0;        // 0: nothing to store (not asked, cached already, aligned)
  bool hash_collision = false;       // a key held by other ids stopped the insert there
};

struct EvictedRecord {
  PayloadId payload = 0;
  int64_t bytes = 0;
  bool is_snapshot = false;
  SnapshotKind kind = SnapshotKind::kMessageBoundary;  // snapshots only
  Hash128 key;                                         // block: H_j; snapshot: its snapshot key
  Hash128 parent_key;  // block: H_{j-1}; snapshot: key of the block it hangs off
  int64_t begin_tokens = 0;
  int64_t end_tokens = 0;        // a snapshot's position
  std::span<const int32_t> ids;  // [begin, end); valid during the callback only
  EvictReason reason = EvictReason::kLowValue;
};

using EvictionListener = std::function<void(const EvictedRecord&)>;

class PrefixCache {
 public:
  // REQUIRES: block_tokens > 0, budget_bytes > 0, max_ghosts >= 0.
  explicit PrefixCache(const CacheOptions& options);
  // REQUIRES: no lease outstanding.
  ~PrefixCache();
  PrefixCache(const PrefixCache&) = delete;
  PrefixCache& operator=(const PrefixCache&) = delete;

  const CacheOptions& options() const { return options_; }
  void SetEvictionListener(EvictionListener listener) { listener_ = std::move(listener); }

  // The deepest resume point for `tokens` (never past tokens.size() - 1), pinned by the lease.
  // REQUIRES: options.max_restore_bytes >= 0.
  Match Lookup(std::span<const int32_t> tokens, const LookupOptions& options = {});

  // Adds the missing full KV blocks of `tokens` and the snapshot at tokens.size(), then evicts
  // until used bytes fit the budget. ResourceExhausted, with nothing changed, when the new
  // records plus everything pinned exceed the budget (e.g. one record bigger than the budget).
  StatusOr<InsertResult> Insert(std::span<const int32_t> tokens, const InsertSpec& spec);

  CacheStats stats() const;
  // Aborts when a structural invariant is broken (prefix_index.h) or used bytes exceed the
  // budget. O(records); for tests and debug endpoints.
  void CheckInvariants() const;

 private:
  friend class Lease;
  void ReleaseLease(std::span<const PayloadId> ids);
  void PinAll(std::span<const PayloadId> ids);
  void UnpinAll(std::span<const PayloadId> ids);
  // Sets a record's priority to clock + value; counts a hit when asked.
  void Touch(PayloadId id, int64_t saved_tokens, bool hit);
  // Tokens a snapshot at the end of `tokens` saves over the previous resume point on `path`.
  int64_t SnapshotSavedTokens(std::span<const PayloadId> path,
                              std::span<const int32_t> tokens) const;
  void AddRecords(std::span<const int32_t> tokens, const InsertSpec& spec, bool add_snapshot,
                  std::vector<PayloadId>* path, InsertResult* result);
  void EvictToBudget();
  void Evict(const Victim& victim);
  void EvictSnapshot(PayloadId id, EvictReason reason);
  void EvictBlock(PayloadId id, EvictReason reason);
  void Notify(const EvictedRecord& record);
  Match MakeMatch(const ResumePlan& plan);

  CacheOptions options_;
  PrefixIndex index_;
  Ghosts ghosts_;
  EvictionListener listener_;
  double clock_ = 0;  // GDSF clock: priority of the latest victim
  uint64_t uses_ = 0;  // EvictionPolicy::kRecency: the priority of the latest use
  int64_t num_leases_ = 0;
  bool in_listener_ = false;
  CacheStats counters_;  // event counters; sizes come from the index
};

}  // namespace ds::cache
