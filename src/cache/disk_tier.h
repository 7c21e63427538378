// DiskTier: the persistent tier of the prefix cache. Records (KV blocks and snapshots, the same
// payloads the memory tier keeps) are files in one directory per model fingerprint, in the
// format of disk_record.h, written atomically in the background and read on demand.
//
// - Open rebuilds the index from the record headers; records of another format version or
//   another payload layout, and *.rec entries that are no regular files or cannot be opened, are
//   ignored (never restored, never deleted); damaged ones are moved to quarantine; files of
//   interrupted writes are removed.
// - Lookup finds the deepest resume point on disk the way the memory tier does (chained block
//   keys from the start, token ids compared, the deepest snapshot inside the common prefix; for
//   dense models any cached KV prefix), within a restore byte limit, and pins its records.
// - Read returns a record's payload only after checking its header checksum, its payload
//   checksum (unless turned off), its layout and its token ids against the request's; a record
//   that fails is quarantined and leaves the index, and so does every record that hangs off it
//   (their files are deleted: no lookup can reach them). A new Lookup then finds the deepest
//   resume point whose records are all good.
// - Submit queues writes and returns at once; a writer thread evicts under the byte cap and
//   writes. When the queue is full the write is dropped. When the disk fails (full, read-only,
//   vanished) writing pauses with one warning while reads go on; writes are dropped (and
//   counted) until the pause is over, then the next one is tried: it resumes writing when it
//   succeeds, and when it fails the next pause is twice as long, up to a limit.
// Eviction under the cap: KV that no snapshot can use goes first (hybrid leaf blocks, orphans),
// then by value (GDSF as in eviction.h); pinned records are never evicted, and the newest
// conversation tails only when nothing else is left.
// Thread safety: all methods are thread-safe.
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "cache/disk_record.h"
#include "cache/types.h"

namespace ds::cache {

struct DiskTierOptions {
  // This model's directory, its tmp/ and quarantine/, created 0700 or else checked: each must be
  // this user's and writable by no one else (disk_files.h), or Open fails.
  std::string dir;
  // The cache directory holding `dir` (--cache-dir), checked the same way and tightened to 0700;
  // empty when `dir` stands alone.
  std::string root_dir;
  int64_t cap_bytes = int64_t{32} << 30;
  int64_t block_tokens = 256;
  bool has_recurrent_state = true;
  std::string layout;  // the payloads' tensors, shapes and dtypes
  uint64_t seed = 0;   // the model fingerprint, folded into every key
  bool verify_checksums = true;
  int64_t max_pending_bytes = int64_t{1} << 30;  // queued payload bytes; more are dropped
  int protected_tails = 8;  // newest conversation tails kept until nothing else is left
  EvictionPolicy eviction = EvictionPolicy::kValue;
  // The pause after a failed write; each failed retry doubles it, up to write_retry_max_s.
  double write_retry_s = 30;
  double write_retry_max_s = 300;
  // Monotonic seconds for the pauses; null: steady_clock. Tests inject their own.
  std::function<double()> clock_s;
  // How long a stop may go on writing what is queued; the rest is dropped (counted, logged).
  double drain_s = 30;
};

struct DiskStats {
  bool writable = false;  // false while writing is paused after a failed write
  int64_t cap_bytes = 0;
  int64_t used_bytes = 0;
  int64_t num_blocks = 0;
  std::array<int64_t, kNumSnapshotKinds> num_snapshots{};
  int64_t pending_writes = 0;
  int64_t pending_bytes = 0;
  int64_t records_written = 0;
  int64_t bytes_written = 0;
  int64_t writes_dropped = 0;  // queue full, too big for the cap, or writing paused
  int64_t write_errors = 0;
  int64_t records_read = 0;
  int64_t bytes_read = 0;
  double read_s = 0;
  int64_t quarantined = 0;
  int64_t ignored = 0;  // another format version or layout; *.rec entries that are no records
  int64_t temporary_removed = 0;
  std::array<int64_t, kNumEvictReasons> evictions{};      // by EvictReason (eviction class)
  std::array<int64_t, kNumEvictReasons> evicted_bytes{};
  int64_t num_evictions() const;
  int64_t records_at_open = 0;
  double open_s = 0;
};

struct DiskRecordRef {
  std::string name;
  Hash128 key;
  bool is_snapshot = false;
  int64_t begin_tokens = 0;
  int64_t record_rows = 0;  // KV rows the record holds
  int64_t copy_rows = 0;    // of them, rows the restore copies (fewer only for a dense partial block)
  int64_t payload_bytes = 0;
};

struct DiskMatch {
  int64_t resume_tokens = 0;
  std::vector<DiskRecordRef> records;  // whole blocks in order, then a snapshot or partial block
  int64_t restore_bytes = 0;
  SnapshotKind kind = SnapshotKind::kPromptEnd;  // of the snapshot, when one ends the match
  bool guarded = false;  // a deeper resume point needed more than the byte limit
};

// A store: the token ids [0, end of the last record) and the payloads to write, blocks by index
// and optionally a snapshot at tokens.size().
struct DiskWrite {
  std::vector<int32_t> tokens;
  std::vector<std::pair<int64_t, std::shared_ptr<const std::vector<uint8_t>>>> blocks;
  std::optional<std::pair<SnapshotKind, std::shared_ptr<const std::vector<uint8_t>>>> snapshot;
};

class DiskTier {
 public:
  static StatusOr<std::unique_ptr<DiskTier>> Open(const DiskTierOptions& options);
  // Writes what is queued, for drain_s at most (logged), then stops the writer.
  ~DiskTier();
  DiskTier(const DiskTier&) = delete;
  DiskTier& operator=(const DiskTier&) = delete;

  const DiskTierOptions& options() const { return options_; }

  // The deepest resume point for `tokens` (never past tokens.size() - 1) whose records sum to at
  // most max_restore_bytes; its records are pinned until Release.
  DiskMatch Lookup(std::span<const int32_t> tokens, int64_t max_restore_bytes);
  void Release(const DiskMatch& match);
  // The payload of one record of a match for `tokens`, checked (see above).
  Status Read(const DiskRecordRef& ref, std::span<const int32_t> tokens,
              std::vector<uint8_t>* payload);

  // What Read does with a record that fails its checks, for one of a match whose payload the
  // caller could not use although it passed them.
  void Discard(const DiskRecordRef& ref, const Status& why);

  void Submit(DiskWrite write);
  // Waits until every queued write is done (tests, shutdown).
  void Flush();

  DiskStats stats() const;

  // The token ids of the newest stored conversation ends (prompt ends, reply ends, interrupted
  // replies) whose whole chain of blocks is on disk, newest first, at most `max`: what the server
  // tokenised before it restarted, so that it can tokenise the next turns the same way.
  std::vector<std::vector<int32_t>> RecentSequences(size_t max) const;

 private:
  struct Entry {
    DiskRecordMeta meta;
    int64_t file_bytes = 0;
    double priority = 0;
    uint64_t last_used = 0;
    int64_t hits = 0;
    int pins = 0;
    int64_t children = 0;  // blocks: child blocks and snapshots that hang off this block
  };
  using EntryMap = std::unordered_map<Hash128, Entry, Hash128Hasher>;

  explicit DiskTier(const DiskTierOptions& options);
  void LoadIndex();
  void WriterLoop();
  void WriteJob(const DiskWrite& job);
  void WriteRecord(DiskRecordMeta meta, const std::vector<uint8_t>& payload);
  void PauseWriting(const Status& why);
  double NowS() const;

  // Under mu_.
  bool WritePaused() const;  // paused after a failure, and not yet time to retry
  void DropWrite();

  // Under mu_.
  void AddEntry(const DiskRecordMeta& meta, int64_t file_bytes);
  void RemoveEntry(bool is_snapshot, const Hash128& key);
  // Removes a record from the index and deletes its file, counted as an eviction for `reason`.
  void DeleteRecord(bool is_snapshot, const Hash128& key, EvictReason reason);
  void DiscardLocked(const DiskRecordRef& ref, const Status& why);
  // Deletes the records that hang off block `key`, no longer indexed, down the chain.
  void DeleteDependents(const Hash128& key);
  bool EvictOne();
  void Touch(Entry* entry, bool hit);
  double Value(const Entry& entry) const;
  Entry* FindEntry(const DiskRecordRef& ref);

  const DiskTierOptions options_;
  mutable std::mutex mu_;
  std::condition_variable wake_writer_;
  std::condition_variable writer_idle_;
  std::deque<DiskWrite> queue_;
  bool writer_busy_ = false;
  bool stopping_ = false;
  EntryMap blocks_;
  EntryMap snapshots_;
  std::unordered_map<Hash128, std::vector<Hash128>, Hash128Hasher> snapshots_by_parent_;
  double clock_ = 0;
  uint64_t use_counter_ = 0;
  double retry_at_s_ = 0;     // while paused: when the next write may be tried (NowS)
  double retry_delay_s_ = 0;  // the current pause
  int64_t dropped_while_paused_ = 0;
  double last_drop_warning_s_ = -1e9;
  double drain_deadline_s_ = 0;
  DiskStats stats_;
  std::thread writer_;
};

}  // namespace ds::cache
