// StateCache: the prefix cache as the engine sees it. Its memory tier pairs the cache core
// (cache/prefix_cache.h), which decides what is kept and where a prompt resumes, with the payload
// bytes of its records; its optional disk tier (cache/disk_tier.h) persists every new record in
// the background. A lookup takes the deeper resume point of the two tiers; a disk hit is copied
// into the memory tier, so the next turn finds it there. A disk record that fails its checks
// leaves the disk tier with what hangs off it, and the restore goes on from the deepest point
// left whose records are all good.
//
// Payloads (see cache/prefix_cache.h for the records):
//  - KV block j: SequenceState::CopyKvRows(j * B, (j + 1) * B);
//  - snapshot at p: the KV rows [floor(p / B) * B, p), then, for hybrid models, the recurrent
//    slots at p (SequenceState::Snapshot(kRecurrentOnly)).
// A restore copies payload bytes into a sequence and never changes them. The restore guard keeps
// a restore within the memory available minus a reserve: a deeper point that needs more falls
// back to a shallower one, or to computing.
// Thread safety: Restore and Store run on the engine thread; stats() may be called from any thread.
#pragma once

#include <cstdint>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include <memory>
#include <optional>
#include <string>

#include "cache/disk_tier.h"
#include "cache/prefix_cache.h"
#include "state/sequence_state.h"

namespace ds::engine {

struct StateCacheOptions {
  int64_t budget_bytes = 0;  // 0 turns the cache off
  int64_t block_tokens = 256;
  // Hybrid models: also snapshot inside a prefill at the points of IntervalPoints (every this
  // many tokens at first, then an eighth of the position apart), so a prompt that diverges at
  // token d resumes within max(this, d / 8) tokens of it. 0: never.
  int64_t snapshot_interval_tokens = 512;
  // Folded into every disk key (the disk directory is also per fingerprint).
  uint64_t model_fingerprint = 0;
  // The disk tier, with the model's directory; nullopt: none. Needs the memory tier.
  struct Disk {
    std::string dir;
    int64_t cap_bytes = int64_t{32} << 30;
    bool verify_checksums = true;
    std::string root_dir;  // the cache directory holding `dir`; see cache::DiskTierOptions
  };
  std::optional<Disk> disk;
  bool restore_guard = true;
  int64_t restore_reserve_bytes = int64_t{1} << 30;
  cache::EvictionPolicy eviction = cache::EvictionPolicy::kValue;  // both tiers
};

enum class CacheTier { kNone, kMemory, kDisk };
const char* CacheTierName(CacheTier tier);

// What a lookup found and restored, for timings, logs and metrics.
struct CacheLookup {
  int64_t resumed_tokens = 0;  // restored into the sequence; computation starts here
  double restore_s = 0;        // wall time of the lookup and the copies
  int64_t longest_match_tokens = 0;  // shared with anything cached, even where nothing resumes
  cache::ResumeLimit limit = cache::ResumeLimit::kNothingCached;
  std::vector<int32_t> cached_window;  // cached ids from the divergence on
  CacheTier tier = CacheTier::kNone;    // where the restored state came from

  const char* limit_name() const { return cache::ResumeLimitName(limit); }
};

class StateCache {
 public:
  // REQUIRES: options.budget_bytes > 0; every sequence given to Restore or Store has `layout`.
  // A disk tier that cannot be opened is logged and left out; serving goes on without it.
  StateCache(const StateCacheOptions& options, const state::StateLayout& layout);

  bool has_recurrent_state() const { return has_recurrent_state_; }
  const StateCacheOptions& options() const { return options_; }

  // Clears `state` and restores the deepest cached prefix of `tokens` into it (never all of it:
  // at least one token is left to compute). A damaged disk record costs only the depth past
  // it (see above); a memory payload that fails to restore leaves the state cleared, which is a
  // cold start, and is reported as resumed_tokens = 0.
  CacheLookup Restore(std::span<const int32_t> tokens, state::SequenceState* state);

  // Stores what is missing for tokens[0, state.num_tokens()): its full KV blocks and a snapshot
  // at state.num_tokens(). REQUIRES: state holds exactly that prefix of `tokens`.
  void Store(std::span<const int32_t> tokens, const state::SequenceState& state,
             cache::SnapshotKind kind);
  // The same at an earlier `position`: KV rows from `state`, and for hybrid models the recurrent
  // slots `recurrent` taken when the state was at `position` (Snapshot(kRecurrentOnly)); empty
  // `recurrent` means state's own. REQUIRES: 0 < position <= state.num_tokens(), and position ==
  // state.num_tokens() when `recurrent` is empty.
  void StoreAt(std::span<const int32_t> tokens, const state::SequenceState& state, int64_t position,
               std::span<const uint8_t> recurrent, cache::SnapshotKind kind);

  cache::CacheStats stats() const;
  // The disk tier, or null when there is none.
  const cache::DiskTier* disk() const { return disk_.get(); }

 private:
  using Bytes = std::shared_ptr<const std::vector<uint8_t>>;
  void PublishStats();
  std::span<const uint8_t> Payload(cache::PayloadId id) const;
  int64_t MaxRestoreBytes() const;
  // StoreAt; with `persist`, new records also go to the disk tier (not for a disk hit copied
  // into memory, whose records are on disk already).
  void Insert(std::span<const int32_t> tokens, const state::SequenceState& state, int64_t position,
              std::span<const uint8_t> recurrent, cache::SnapshotKind kind, bool persist);
  Status RestoreFromMemory(const cache::Match& match, state::SequenceState* state);
  // The deepest disk resume point past floor_tokens whose records all restore, restored into
  // `state`; resume_tokens = 0 (and `state` cleared) when there is none.
  cache::DiskMatch RestoreDeepestFromDisk(std::span<const int32_t> tokens, int64_t floor_tokens,
                                          int64_t max_restore_bytes, state::SequenceState* state);
  // The records of `match` into `state`; the first that fails is discarded from the disk tier.
  Status RestoreFromDisk(const cache::DiskMatch& match, std::span<const int32_t> tokens,
                         state::SequenceState* state);
  Status AppendDiskRecord(const cache::DiskRecordRef& ref, std::span<const uint8_t> payload,
                          state::SequenceState* state);

  StateCacheOptions options_;
  bool has_recurrent_state_;
  cache::PrefixCache cache_;
  // Shared with the disk writer, which may still be writing a record the memory tier evicted.
  std::unordered_map<cache::PayloadId, Bytes> payloads_;
  std::unique_ptr<cache::DiskTier> disk_;

  mutable std::mutex stats_mu_;
  cache::CacheStats published_stats_;  // copied after every change, read by metrics
};

}  // namespace ds::engine
