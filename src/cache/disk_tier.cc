#include "cache/disk_tier.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <tuple>

#include "base/log.h"
#include "cache/disk_files.h"

namespace ds::cache {
namespace {

constexpr Hash128 kNoParent{};

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool IsTail(SnapshotKind kind) {
  return kind == SnapshotKind::kPromptEnd || kind == SnapshotKind::kGenerationEnd ||
         kind == SnapshotKind::kInterrupted;
}

bool SameIds(std::span<const int32_t> a, std::span<const int32_t> b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

}  // namespace

int64_t DiskStats::num_evictions() const {
  int64_t total = 0;
  for (int64_t n : evictions) total += n;
  return total;
}

DiskTier::DiskTier(const DiskTierOptions& options) : options_(options) {
  stats_.cap_bytes = options.cap_bytes;
}

StatusOr<std::unique_ptr<DiskTier>> DiskTier::Open(const DiskTierOptions& options) {
  if (options.cap_bytes <= 0 || options.block_tokens <= 0) {
    return InvalidArgumentError("the disk tier needs a positive cap and block size");
  }
  auto start = std::chrono::steady_clock::now();
  if (!options.root_dir.empty()) DS_RETURN_IF_ERROR(EnsureCacheRoot(options.root_dir));
  for (const std::string& dir : {options.dir, options.dir + "/" + kTmpDirName,
                                 options.dir + "/" + kQuarantineDirName}) {
    DS_RETURN_IF_ERROR(EnsurePrivateDirectory(dir));
  }
  std::unique_ptr<DiskTier> tier(new DiskTier(options));
  tier->stats_.temporary_removed = RemoveTemporaryFiles(options.dir);
  tier->LoadIndex();
  tier->stats_.open_s = SecondsSince(start);
  tier->stats_.writable = true;
  tier->writer_ = std::thread([t = tier.get()] { t->WriterLoop(); });
  return tier;
}

DiskTier::~DiskTier() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    drain_deadline_s_ = NowS() + options_.drain_s;
    if (!queue_.empty()) {
      DS_LOG_INFO("disk cache: writing {} queued store(s) ({:.1f} MiB) before stopping",
                  queue_.size(), static_cast<double>(stats_.pending_bytes) / (1 << 20));
    }
  }
  wake_writer_.notify_all();
  if (writer_.joinable()) writer_.join();
}

void DiskTier::LoadIndex() {
  std::vector<ScannedRecord> scanned = ScanRecords(options_.dir);
  // Oldest first, so recency survives a restart as the eviction order.
  std::sort(scanned.begin(), scanned.end(), [](const ScannedRecord& a, const ScannedRecord& b) {
    return a.meta.written_unix_s < b.meta.written_unix_s;
  });
  std::lock_guard lock(mu_);
  for (ScannedRecord& record : scanned) {
    if (record.status.code() == StatusCode::kUnimplemented) {
      ++stats_.ignored;
      continue;
    }
    if (record.status.code() == StatusCode::kUnavailable) {
      // Not ours to move: a transient failure to open would otherwise lose a good record.
      DS_LOG_WARN("disk cache: ignored {}: {}", record.name, record.status.message());
      ++stats_.ignored;
      continue;
    }
    if (record.status.ok() && record.meta.layout != options_.layout) {
      ++stats_.ignored;
      continue;
    }
    const DiskRecordMeta& m = record.meta;
    bool consistent = record.status.ok() &&
                      record.name == RecordFileName(m.is_snapshot, m.key) &&
                      m.key == (m.is_snapshot ? SnapshotKey(m.parent_key, m.ids, options_.seed)
                                              : BlockKey(m.parent_key, m.ids, options_.seed));
    if (!consistent) {
      DS_LOG_WARN("disk cache: quarantined {}: {}", record.name,
                  record.status.ok() ? "its key does not match its contents"
                                     : record.status.message());
      Quarantine(options_.dir, record.name);
      ++stats_.quarantined;
      continue;
    }
    AddEntry(m, record.file_bytes);
  }
  stats_.records_at_open = static_cast<int64_t>(blocks_.size() + snapshots_.size());
  while (stats_.used_bytes > options_.cap_bytes && EvictOne()) {
  }
}

double DiskTier::Value(const Entry& entry) const {
  const double tokens = entry.meta.is_snapshot ? entry.meta.end_tokens : options_.block_tokens;
  const double mib = std::max<double>(entry.file_bytes, 1) / (1 << 20);
  return (1 + entry.hits) * tokens / mib;
}

void DiskTier::Touch(Entry* entry, bool hit) {
  if (hit) ++entry->hits;
  entry->last_used = ++use_counter_;
  entry->priority = options_.eviction == EvictionPolicy::kRecency
                        ? static_cast<double>(entry->last_used)
                        : clock_ + Value(*entry);
}

void DiskTier::AddEntry(const DiskRecordMeta& meta, int64_t file_bytes) {
  EntryMap& map = meta.is_snapshot ? snapshots_ : blocks_;
  Entry entry;
  entry.meta = meta;
  entry.file_bytes = file_bytes;
  auto [it, added] = map.emplace(meta.key, std::move(entry));
  if (!added) return;
  Touch(&it->second, false);
  stats_.used_bytes += file_bytes;
  if (meta.is_snapshot) {
    snapshots_by_parent_[meta.parent_key].push_back(meta.key);
    ++stats_.num_snapshots[static_cast<int>(meta.kind)];
  } else {
    ++stats_.num_blocks;
  }
  if (!(meta.parent_key == kNoParent)) {
    if (auto parent = blocks_.find(meta.parent_key); parent != blocks_.end()) {
      ++parent->second.children;
    }
  }
}

void DiskTier::RemoveEntry(bool is_snapshot, const Hash128& key) {
  EntryMap& map = is_snapshot ? snapshots_ : blocks_;
  auto it = map.find(key);
  if (it == map.end()) return;
  const DiskRecordMeta& meta = it->second.meta;
  stats_.used_bytes -= it->second.file_bytes;
  if (is_snapshot) {
    std::vector<Hash128>& siblings = snapshots_by_parent_[meta.parent_key];
    std::erase(siblings, key);
    if (siblings.empty()) snapshots_by_parent_.erase(meta.parent_key);
    --stats_.num_snapshots[static_cast<int>(meta.kind)];
  } else {
    --stats_.num_blocks;
  }
  if (!(meta.parent_key == kNoParent)) {
    if (auto parent = blocks_.find(meta.parent_key); parent != blocks_.end()) {
      --parent->second.children;
    }
  }
  map.erase(it);
}

bool DiskTier::EvictOne() {
  // The newest conversation tails, protected while anything else is left.
  std::vector<std::pair<uint64_t, Hash128>> tails;
  for (const auto& [key, e] : snapshots_) {
    if (IsTail(e.meta.kind)) tails.push_back({e.last_used, key});
  }
  const size_t keep = std::min<size_t>(tails.size(), std::max(options_.protected_tails, 0));
  std::partial_sort(tails.begin(), tails.begin() + keep, tails.end(),
                    [](const auto& a, const auto& b) { return a.first > b.first; });
  auto is_protected = [&](const Hash128& key) {
    for (size_t i = 0; i < keep; ++i) {
      if (tails[i].second == key) return true;
    }
    return false;
  };
  auto orphan = [&](const DiskRecordMeta& m) {
    return !(m.parent_key == kNoParent) && blocks_.find(m.parent_key) == blocks_.end();
  };
  // (class, priority, last use): lowest first.
  struct Candidate {
    int cls;
    double priority;
    uint64_t last_used;
    bool is_snapshot;
    Hash128 key;
  };
  std::optional<Candidate> best;
  auto consider = [&](const Candidate& c) {
    if (!best || std::tie(c.cls, c.priority, c.last_used) <
                     std::tie(best->cls, best->priority, best->last_used)) {
      best = c;
    }
  };
  for (const auto& [key, e] : blocks_) {
    if (e.pins > 0 || e.children > 0) continue;  // only leaves, so the index stays prefix-closed
    bool useless = options_.has_recurrent_state || orphan(e.meta);
    consider({useless ? 0 : 1, e.priority, e.last_used, false, key});
  }
  for (const auto& [key, e] : snapshots_) {
    if (e.pins > 0) continue;
    int cls = orphan(e.meta) ? 0 : is_protected(key) ? 2 : 1;
    consider({cls, e.priority, e.last_used, true, key});
  }
  if (!best) return false;
  clock_ = std::max(clock_, best->priority);
  DeleteRecord(best->is_snapshot, best->key,
               best->cls == 0   ? EvictReason::kUselessKv
               : best->cls == 1 ? EvictReason::kLowValue
                                : EvictReason::kProtected);
  return true;
}

void DiskTier::DeleteRecord(bool is_snapshot, const Hash128& key, EvictReason reason) {
  const Entry& victim = (is_snapshot ? snapshots_ : blocks_).at(key);
  ::unlink((options_.dir + "/" + RecordFileName(is_snapshot, key)).c_str());
  ++stats_.evictions[static_cast<int>(reason)];
  stats_.evicted_bytes[static_cast<int>(reason)] += victim.file_bytes;
  RemoveEntry(is_snapshot, key);
}

DiskMatch DiskTier::Lookup(std::span<const int32_t> tokens, int64_t max_restore_bytes) {
  DiskMatch best;
  const int64_t n = static_cast<int64_t>(tokens.size());
  const int64_t limit = n - 1;  // one token is always left to compute, for the logits
  if (limit <= 0) return best;
  const int64_t block = options_.block_tokens;
  std::lock_guard lock(mu_);
  std::vector<DiskRecordRef> path;
  std::vector<Entry*> path_entries;
  int64_t path_bytes = 0;
  Entry* best_tail = nullptr;
  std::vector<Entry*> best_entries;
  auto consider = [&](int64_t resume, std::vector<DiskRecordRef> records, int64_t bytes,
                      Entry* tail, SnapshotKind kind) {
    if (resume <= best.resume_tokens) return;
    if (bytes > max_restore_bytes) {
      best.guarded = true;
      return;
    }
    const bool guarded = best.guarded;
    best = DiskMatch{resume, std::move(records), bytes, kind, guarded};
    best_tail = tail;
    best_entries = path_entries;
  };
  auto consider_snapshots = [&](const Hash128& parent, int64_t begin) {
    auto it = snapshots_by_parent_.find(parent);
    if (it == snapshots_by_parent_.end()) return;
    for (const Hash128& key : it->second) {
      Entry& s = snapshots_.at(key);
      const int64_t pos = s.meta.end_tokens;
      if (pos > limit || pos <= best.resume_tokens || s.meta.begin_tokens != begin ||
          !SameIds(s.meta.ids, tokens.subspan(begin, pos - begin))) {
        continue;
      }
      std::vector<DiskRecordRef> records = path;
      records.push_back({RecordFileName(true, key), key, true, begin, pos - begin, pos - begin,
                         s.meta.payload_bytes});
      consider(pos, std::move(records), path_bytes + s.meta.payload_bytes, &s, s.meta.kind);
    }
  };
  Hash128 parent = kNoParent;
  consider_snapshots(parent, 0);
  for (int64_t begin = 0; begin + block <= n; begin += block) {
    std::span<const int32_t> ids = tokens.subspan(begin, block);
    Hash128 key = BlockKey(parent, ids, options_.seed);
    auto it = blocks_.find(key);
    if (it == blocks_.end() || !SameIds(it->second.meta.ids, ids)) break;
    Entry& e = it->second;
    if (!options_.has_recurrent_state) {
      // Dense: the KV prefix itself is resumable, a partial block where the prompt ends inside.
      const int64_t rows = std::min(block, limit - begin);
      std::vector<DiskRecordRef> records = path;
      records.push_back({RecordFileName(false, key), key, false, begin, block, rows,
                         e.meta.payload_bytes});
      path_entries.push_back(&e);
      consider(begin + rows, std::move(records), path_bytes + e.meta.payload_bytes, nullptr,
               SnapshotKind::kPromptEnd);
      path_entries.pop_back();
    }
    path.push_back(
        {RecordFileName(false, key), key, false, begin, block, block, e.meta.payload_bytes});
    path_entries.push_back(&e);
    path_bytes += e.meta.payload_bytes;
    parent = key;
    consider_snapshots(parent, begin + block);
  }
  if (best.resume_tokens > 0) {
    best_entries.resize(std::min<size_t>(best_entries.size(), best.records.size()));
    for (Entry* e : best_entries) {
      ++e->pins;
      Touch(e, true);
    }
    if (best_tail != nullptr) {
      ++best_tail->pins;
      Touch(best_tail, true);
    }
  }
  return best;
}

DiskTier::Entry* DiskTier::FindEntry(const DiskRecordRef& ref) {
  EntryMap& map = ref.is_snapshot ? snapshots_ : blocks_;
  auto it = map.find(ref.key);
  return it == map.end() ? nullptr : &it->second;
}

void DiskTier::Release(const DiskMatch& match) {
  std::lock_guard lock(mu_);
  for (const DiskRecordRef& ref : match.records) {
    if (Entry* e = FindEntry(ref); e != nullptr && e->pins > 0) --e->pins;
  }
}

Status DiskTier::Read(const DiskRecordRef& ref, std::span<const int32_t> tokens,
                      std::vector<uint8_t>* payload) {
  auto start = std::chrono::steady_clock::now();
  DiskRecordMeta meta;
  Status status = ReadRecord(options_.dir + "/" + ref.name, options_.verify_checksums, &meta,
                             payload);
  if (status.ok() && meta.layout != options_.layout) {
    status = DataLossError("record layout changed");
  }
  if (status.ok()) {
    const int64_t rows = ref.copy_rows;
    const bool ids_match =
        meta.begin_tokens == ref.begin_tokens &&
        static_cast<int64_t>(meta.ids.size()) == ref.record_rows &&
        ref.begin_tokens + rows <= static_cast<int64_t>(tokens.size()) &&
        SameIds(std::span<const int32_t>(meta.ids).first(rows), tokens.subspan(ref.begin_tokens, rows));
    if (!ids_match) status = DataLossError("record token ids differ from the request's");
  }
  std::lock_guard lock(mu_);
  if (!status.ok()) {
    DiscardLocked(ref, status);
    return status;
  }
  ++stats_.records_read;
  stats_.bytes_read += static_cast<int64_t>(payload->size());
  stats_.read_s += SecondsSince(start);
  return OkStatus();
}

void DiskTier::Discard(const DiskRecordRef& ref, const Status& why) {
  std::lock_guard lock(mu_);
  DiscardLocked(ref, why);
}

void DiskTier::DiscardLocked(const DiskRecordRef& ref, const Status& why) {
  DS_LOG_WARN("disk cache: quarantined {}: {}", ref.name, why.message());
  Quarantine(options_.dir, ref.name);
  ++stats_.quarantined;
  if (FindEntry(ref) == nullptr) return;
  RemoveEntry(ref.is_snapshot, ref.key);
  if (!ref.is_snapshot) DeleteDependents(ref.key);
}

void DiskTier::DeleteDependents(const Hash128& key) {
  std::unordered_map<Hash128, std::vector<Hash128>, Hash128Hasher> child_blocks;
  for (const auto& [child, e] : blocks_) child_blocks[e.meta.parent_key].push_back(child);
  std::vector<Hash128> parents = {key};
  while (!parents.empty()) {
    const Hash128 parent = parents.back();
    parents.pop_back();
    if (auto it = snapshots_by_parent_.find(parent); it != snapshots_by_parent_.end()) {
      const std::vector<Hash128> snapshots = it->second;  // DeleteRecord edits the map
      for (const Hash128& snapshot : snapshots) {
        DeleteRecord(true, snapshot, EvictReason::kUselessKv);
      }
    }
    if (auto it = child_blocks.find(parent); it != child_blocks.end()) {
      for (const Hash128& child : it->second) {
        DeleteRecord(false, child, EvictReason::kUselessKv);
        parents.push_back(child);
      }
    }
  }
}

void DiskTier::Submit(DiskWrite write) {
  int64_t bytes = 0;
  for (const auto& [index, payload] : write.blocks) bytes += payload->size();
  if (write.snapshot) bytes += write.snapshot->second->size();
  {
    std::lock_guard lock(mu_);
    if (WritePaused() || stats_.pending_bytes + bytes > options_.max_pending_bytes) {
      DropWrite();
      return;
    }
    stats_.pending_bytes += bytes;
    ++stats_.pending_writes;
    queue_.push_back(std::move(write));
  }
  wake_writer_.notify_one();
}

void DiskTier::Flush() {
  std::unique_lock lock(mu_);
  writer_idle_.wait(lock, [&] { return queue_.empty() && !writer_busy_; });
}

std::vector<std::vector<int32_t>> DiskTier::RecentSequences(size_t max) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<const Entry*> ends;
  for (const auto& [key, entry] : snapshots_) {
    const SnapshotKind kind = entry.meta.kind;
    if (kind == SnapshotKind::kPromptEnd || kind == SnapshotKind::kGenerationEnd ||
        kind == SnapshotKind::kInterrupted) {
      ends.push_back(&entry);
    }
  }
  std::sort(ends.begin(), ends.end(), [](const Entry* a, const Entry* b) {
    return std::tie(a->meta.written_unix_s, a->last_used) >
           std::tie(b->meta.written_unix_s, b->last_used);
  });
  std::vector<std::vector<int32_t>> sequences;
  for (const Entry* end : ends) {
    if (sequences.size() >= max) break;
    std::vector<const DiskRecordMeta*> chain = {&end->meta};
    while (!(chain.back()->parent_key == kNoParent)) {
      auto parent = blocks_.find(chain.back()->parent_key);
      if (parent == blocks_.end()) break;
      chain.push_back(&parent->second.meta);
    }
    if (chain.back()->begin_tokens != 0) continue;  // a block of the chain is gone
    std::vector<int32_t>& ids = sequences.emplace_back();
    for (auto meta = chain.rbegin(); meta != chain.rend(); ++meta) {
      ids.insert(ids.end(), (*meta)->ids.begin(), (*meta)->ids.end());
    }
  }
  return sequences;
}

DiskStats DiskTier::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void DiskTier::WriterLoop() {
  std::unique_lock lock(mu_);
  for (;;) {
    wake_writer_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) break;  // stopping, and everything queued is written
    if (stopping_ && NowS() > drain_deadline_s_) {
      DS_LOG_WARN("disk cache: stopped with {} store(s) unwritten after {:.0f} s of writing",
                  queue_.size(), options_.drain_s);
      stats_.writes_dropped += static_cast<int64_t>(queue_.size());
      queue_.clear();
      break;
    }
    DiskWrite job = std::move(queue_.front());
    queue_.pop_front();
    writer_busy_ = true;
    lock.unlock();
    WriteJob(job);
    lock.lock();
    int64_t bytes = 0;
    for (const auto& [index, payload] : job.blocks) bytes += payload->size();
    if (job.snapshot) bytes += job.snapshot->second->size();
    stats_.pending_bytes -= bytes;
    --stats_.pending_writes;
    writer_busy_ = false;
    if (queue_.empty()) writer_idle_.notify_all();
  }
  writer_idle_.notify_all();
}

void DiskTier::WriteJob(const DiskWrite& job) {
  const int64_t block = options_.block_tokens;
  const std::span<const int32_t> tokens(job.tokens);
  // keys[j] = chain key of blocks [0, j]; keys of the blocks the job touches are enough, but
  // each depends on every block before it.
  std::vector<Hash128> keys;
  Hash128 parent = kNoParent;
  for (int64_t begin = 0; begin + block <= static_cast<int64_t>(tokens.size()); begin += block) {
    parent = BlockKey(parent, tokens.subspan(begin, block), options_.seed);
    keys.push_back(parent);
  }
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  for (const auto& [index, payload] : job.blocks) {
    if (index >= static_cast<int64_t>(keys.size())) continue;
    DiskRecordMeta meta;
    meta.begin_tokens = index * block;
    meta.end_tokens = meta.begin_tokens + block;
    meta.key = keys[index];
    meta.parent_key = index == 0 ? kNoParent : keys[index - 1];
    meta.ids.assign(tokens.begin() + meta.begin_tokens, tokens.begin() + meta.end_tokens);
    meta.written_unix_s = now;
    WriteRecord(std::move(meta), *payload);
  }
  if (job.snapshot) {
    const int64_t pos = static_cast<int64_t>(tokens.size());
    const int64_t whole = pos / block;
    DiskRecordMeta meta;
    meta.is_snapshot = true;
    meta.kind = job.snapshot->first;
    meta.begin_tokens = whole * block;
    meta.end_tokens = pos;
    meta.parent_key = whole == 0 ? kNoParent : keys[whole - 1];
    meta.ids.assign(tokens.begin() + meta.begin_tokens, tokens.end());
    meta.key = SnapshotKey(meta.parent_key, meta.ids, options_.seed);
    meta.written_unix_s = now;
    WriteRecord(std::move(meta), *job.snapshot->second);
  }
}

void DiskTier::WriteRecord(DiskRecordMeta meta, const std::vector<uint8_t>& payload) {
  meta.layout = options_.layout;
  meta.payload_bytes = static_cast<int64_t>(payload.size());
  const std::string name = RecordFileName(meta.is_snapshot, meta.key);
  const int64_t file_bytes =
      RecordHeaderBytes(meta.layout.size(), meta.ids.size()) + meta.payload_bytes;
  {
    std::lock_guard lock(mu_);
    EntryMap& map = meta.is_snapshot ? snapshots_ : blocks_;
    if (auto it = map.find(meta.key); it != map.end()) {
      Touch(&it->second, false);
      return;
    }
    if (WritePaused() || file_bytes > options_.cap_bytes) {
      DropWrite();
      return;
    }
    while (stats_.used_bytes + file_bytes > options_.cap_bytes && EvictOne()) {
    }
    if (stats_.used_bytes + file_bytes > options_.cap_bytes) {
      ++stats_.writes_dropped;
      return;
    }
  }
  meta.payload_checksum = PayloadChecksum(payload);
  std::vector<uint8_t> header = EncodeRecordHeader(meta);
  Status status = WriteRecordAtomically(options_.dir, name, header, payload);
  if (!status.ok()) {
    PauseWriting(status);
    return;
  }
  std::lock_guard lock(mu_);
  if (!stats_.writable) {
    stats_.writable = true;
    DS_LOG_INFO("disk cache tier: writing resumed; {} writes were dropped while it was paused",
                dropped_while_paused_);
    dropped_while_paused_ = 0;
  }
  AddEntry(meta, file_bytes);
  ++stats_.records_written;
  stats_.bytes_written += file_bytes;
}

void DiskTier::PauseWriting(const Status& why) {
  std::lock_guard lock(mu_);
  ++stats_.write_errors;
  // The disk may be full for a while (until someone frees space) or for good: retries back off.
  const bool was_writable = stats_.writable;
  retry_delay_s_ = was_writable ? options_.write_retry_s
                                : std::min(2 * retry_delay_s_, options_.write_retry_max_s);
  retry_at_s_ = NowS() + retry_delay_s_;
  stats_.writable = false;
  if (was_writable) {
    DS_LOG_WARN("disk cache tier: writing paused for {:.0f} s, writes until then are dropped and "
                "serving goes on with the memory tier: {}",
                retry_delay_s_, why.message());
  } else {
    DS_LOG_WARN("disk cache tier: a retry failed, writing paused for {:.0f} s more ({} writes "
                "dropped so far): {}",
                retry_delay_s_, dropped_while_paused_, why.message());
  }
}

double DiskTier::NowS() const {
  if (options_.clock_s) return options_.clock_s();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool DiskTier::WritePaused() const { return !stats_.writable && NowS() < retry_at_s_; }

void DiskTier::DropWrite() {
  ++stats_.writes_dropped;
  if (!stats_.writable) {
    ++dropped_while_paused_;  // the pause's own warnings tell of these
    return;
  }
  // The queue is full: the disk is slower than the stores. Once a minute at most.
  const double now = NowS();
  if (now - last_drop_warning_s_ < 60) return;
  last_drop_warning_s_ = now;
  DS_LOG_WARN("disk cache: dropped a store: {:.0f} MiB already wait to be written; {} dropped "
              "so far (deltaserve_disk_cache_writes_dropped_total)",
              static_cast<double>(stats_.pending_bytes) / (1 << 20), stats_.writes_dropped);
}

}  // namespace ds::cache
