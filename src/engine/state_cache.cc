#include "engine/state_cache.h"

#include <algorithm>
#include <limits>

#include "base/check.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/system_memory.h"

namespace ds::engine {
namespace {

cache::CacheOptions CoreOptions(const StateCacheOptions& options, bool has_recurrent_state) {
  DS_CHECK(options.budget_bytes > 0);
  cache::CacheOptions core;
  core.block_tokens = options.block_tokens;
  core.budget_bytes = options.budget_bytes;
  core.has_recurrent_state = has_recurrent_state;
  core.model_seed = options.model_fingerprint;
  core.eviction = options.eviction;
  return core;
}

// The tensors of every payload, with shapes and dtypes: a disk record made for another layout
// is never restored.
std::string PayloadLayout(const state::StateLayout& layout) {
  int64_t attention = 0, recurrent = 0;
  for (state::LayerKind kind : layout.layer_kinds) {
    (kind == state::LayerKind::kAttention ? attention : recurrent) += 1;
  }
  return "k: " + std::string(tensor::DTypeName(layout.k_dtype)) +
         ", v: " + std::string(tensor::DTypeName(layout.v_dtype)) + " [rows][" +
         std::to_string(attention) + " layers][K,V][" +
         std::to_string(layout.kv_row_floats) + "]; recurrent: f32 [" +
         std::to_string(recurrent) + " layers][conv " + std::to_string(layout.conv_floats) +
         ", ssm " + std::to_string(layout.ssm_floats) + "] after a " +
         std::to_string(state::SequenceState::kSnapshotHeaderBytes) + "-byte header (version " +
         std::to_string(state::SequenceState::kSnapshotVersion) + ")";
}

}  // namespace

const char* CacheTierName(CacheTier tier) {
  switch (tier) {
    case CacheTier::kMemory: return "memory";
    case CacheTier::kDisk: return "disk";
    case CacheTier::kNone: break;
  }
  return "none";
}

StateCache::StateCache(const StateCacheOptions& options, const state::StateLayout& layout)
    : options_(options),
      has_recurrent_state_(layout.HasRecurrentLayers()),
      cache_(CoreOptions(options, has_recurrent_state_)) {
  cache_.SetEvictionListener(
      [this](const cache::EvictedRecord& record) { payloads_.erase(record.payload); });
  if (options.disk.has_value()) {
    cache::DiskTierOptions disk;
    disk.dir = options.disk->dir;
    disk.root_dir = options.disk->root_dir;
    disk.cap_bytes = options.disk->cap_bytes;
    disk.block_tokens = options.block_tokens;
    disk.has_recurrent_state = has_recurrent_state_;
    disk.layout = PayloadLayout(layout);
    disk.seed = options.model_fingerprint;
    disk.verify_checksums = options.disk->verify_checksums;
    disk.eviction = options.eviction;
    StatusOr<std::unique_ptr<cache::DiskTier>> opened = cache::DiskTier::Open(disk);
    if (opened.ok()) {
      disk_ = std::move(opened).value();
      const cache::DiskStats stats = disk_->stats();
      DS_LOG_INFO("disk cache tier: {} ({} records, {:.1f} MiB, opened in {:.3f} s)", disk.dir,
                  stats.records_at_open, stats.used_bytes / 1048576.0, stats.open_s);
    } else {
      DS_LOG_WARN("disk cache tier off, serving goes on with the memory tier: {}",
                  opened.status().message());
    }
  }
  PublishStats();
}

int64_t StateCache::MaxRestoreBytes() const {
  if (!options_.restore_guard) return std::numeric_limits<int64_t>::max();
  const int64_t available = AvailableMemoryBytes();
  if (available < 0) return std::numeric_limits<int64_t>::max();
  return std::max<int64_t>(0, available - options_.restore_reserve_bytes);
}

std::span<const uint8_t> StateCache::Payload(cache::PayloadId id) const {
  auto it = payloads_.find(id);
  // A record whose bytes are missing restores nothing, and the size checks turn that into a
  // cold start.
  if (it == payloads_.end()) return {};
  return *it->second;
}

Status StateCache::RestoreFromMemory(const cache::Match& match, state::SequenceState* state) {
  const int64_t block = options_.block_tokens;
  for (const cache::BlockRef& ref : match.blocks) {
    DS_RETURN_IF_ERROR(state->AppendKvRows(Payload(ref.payload), block, block));
  }
  if (!match.tail.has_value()) return OkStatus();
  const cache::TailRef& tail = *match.tail;
  std::span<const uint8_t> bytes = Payload(tail.payload);
  const int64_t kv_bytes = state->KvRowsBytes(tail.record_rows);
  if (static_cast<int64_t>(bytes.size()) < kv_bytes) {
    return InternalError("cached record shorter than its KV rows");
  }
  DS_RETURN_IF_ERROR(state->AppendKvRows(bytes.first(kv_bytes), tail.record_rows, tail.num_rows));
  if (tail.is_snapshot && has_recurrent_state_) {
    DS_RETURN_IF_ERROR(state->Restore(bytes.subspan(kv_bytes)));
  }
  return OkStatus();
}

Status StateCache::RestoreFromDisk(const cache::DiskMatch& match, std::span<const int32_t> tokens,
                                   state::SequenceState* state) {
  std::vector<uint8_t> payload;
  for (const cache::DiskRecordRef& ref : match.records) {
    DS_RETURN_IF_ERROR(disk_->Read(ref, tokens, &payload));  // a bad record is discarded
    Status status = AppendDiskRecord(ref, payload, state);
    if (!status.ok()) {
      disk_->Discard(ref, status);
      return status;
    }
  }
  return OkStatus();
}

Status StateCache::AppendDiskRecord(const cache::DiskRecordRef& ref,
                                    std::span<const uint8_t> payload,
                                    state::SequenceState* state) {
  const int64_t kv_bytes = state->KvRowsBytes(ref.record_rows);
  if (static_cast<int64_t>(payload.size()) < kv_bytes) {
    return DataLossError("disk record shorter than its KV rows");
  }
  DS_RETURN_IF_ERROR(state->AppendKvRows(payload.first(kv_bytes), ref.record_rows, ref.copy_rows));
  if (ref.is_snapshot && has_recurrent_state_) {
    DS_RETURN_IF_ERROR(state->Restore(payload.subspan(kv_bytes)));
  }
  return OkStatus();
}

cache::DiskMatch StateCache::RestoreDeepestFromDisk(std::span<const int32_t> tokens,
                                                    int64_t floor_tokens,
                                                    int64_t max_restore_bytes,
                                                    state::SequenceState* state) {
  // Every failed try takes a record (and what hangs off it) out of the disk index, so the next
  // lookup finds the deepest point whose records are all good; a few tries bound what a badly
  // damaged directory can cost one request.
  constexpr int kMaxTries = 4;
  bool guarded = false;
  for (int attempt = 0; attempt < kMaxTries; ++attempt) {
    cache::DiskMatch match = disk_->Lookup(tokens, max_restore_bytes);
    guarded |= match.guarded;
    if (match.resume_tokens <= floor_tokens) {
      disk_->Release(match);
      break;
    }
    Status status = RestoreFromDisk(match, tokens, state);
    disk_->Release(match);
    if (status.ok() && state->num_tokens() == match.resume_tokens) return match;
    DS_LOG_WARN("disk cache restore of {} tokens failed: {}", match.resume_tokens,
                status.ok() ? "its records hold another number of tokens" : status.message());
    state->Clear();
    if (status.ok()) break;  // nothing was discarded: the next lookup would find the same
  }
  cache::DiskMatch none;
  none.guarded = guarded;
  return none;
}

CacheLookup StateCache::Restore(std::span<const int32_t> tokens, state::SequenceState* state) {
  const Clock::time_point start = Clock::now();
  state->Clear();
  const int64_t max_restore_bytes = MaxRestoreBytes();
  cache::Match match = cache_.Lookup(tokens, {.max_restore_bytes = max_restore_bytes});
  CacheLookup lookup;
  lookup.longest_match_tokens = match.longest_match_tokens;
  lookup.limit = match.limit;
  lookup.cached_window = std::move(match.cached_window);
  // Nothing resumes past the last token, so a memory hit there needs no disk lookup.
  if (disk_ != nullptr && match.resume_tokens + 1 < static_cast<int64_t>(tokens.size())) {
    cache::DiskMatch on_disk =
        RestoreDeepestFromDisk(tokens, match.resume_tokens, max_restore_bytes, state);
    if (on_disk.resume_tokens > 0) {
      match.lease.Release();
      lookup.resumed_tokens = on_disk.resume_tokens;
      lookup.longest_match_tokens = std::max(lookup.longest_match_tokens, on_disk.resume_tokens);
      lookup.limit = cache::ResumeLimit::kReachedMatch;
      lookup.tier = CacheTier::kDisk;
      lookup.restore_s = SecondsSince(start);
      // Promoted: the next turn of this conversation finds it in memory.
      Insert(tokens, *state, state->num_tokens(), {}, on_disk.kind, /*persist=*/false);
      return lookup;
    }
    if (on_disk.guarded && match.resume_tokens == 0) {
      lookup.limit = cache::ResumeLimit::kRestoreGuard;
    }
  }
  Status status = RestoreFromMemory(match, state);
  match.lease.Release();
  if (!status.ok() || state->num_tokens() != match.resume_tokens) {
    DS_LOG_ERROR("cache restore failed, computing the prompt cold: {}", status.message());
    state->Clear();
  } else {
    lookup.resumed_tokens = match.resume_tokens;
    if (lookup.resumed_tokens > 0) lookup.tier = CacheTier::kMemory;
  }
  lookup.restore_s = SecondsSince(start);
  PublishStats();
  return lookup;
}

void StateCache::Store(std::span<const int32_t> tokens, const state::SequenceState& state,
                       cache::SnapshotKind kind) {
  StoreAt(tokens, state, state.num_tokens(), {}, kind);
}

void StateCache::StoreAt(std::span<const int32_t> tokens, const state::SequenceState& state,
                         int64_t position, std::span<const uint8_t> recurrent,
                         cache::SnapshotKind kind) {
  Insert(tokens, state, position, recurrent, kind, /*persist=*/true);
}

void StateCache::Insert(std::span<const int32_t> tokens, const state::SequenceState& state,
                        int64_t position, std::span<const uint8_t> recurrent,
                        cache::SnapshotKind kind, bool persist) {
  DS_CHECK(position > 0 && position <= state.num_tokens() &&
           position <= static_cast<int64_t>(tokens.size()));
  // Taken from `state` only when the core asks for a new snapshot: most stores find it cached.
  const bool from_state = recurrent.empty();
  DS_CHECK(!has_recurrent_state_ || !from_state || position == state.num_tokens());
  const int64_t block = options_.block_tokens;
  const int64_t tail_rows = position % block;
  const state::SequenceState::Parts recurrent_only = state::SequenceState::Parts::kRecurrentOnly;
  int64_t recurrent_bytes = 0;
  if (has_recurrent_state_) {
    recurrent_bytes = from_state ? state.SnapshotBytes(recurrent_only)
                                 : static_cast<int64_t>(recurrent.size());
  }
  cache::InsertSpec spec;
  // A model without attention layers has empty KV blocks; the core counts them as one byte.
  spec.block_bytes = std::max<int64_t>(1, state.KvRowsBytes(block));
  // A dense snapshot aligned to a block holds nothing; the core then stores none.
  spec.snapshot = cache::SnapshotSpec{
      kind, std::max<int64_t>(1, state.KvRowsBytes(tail_rows) + recurrent_bytes)};
  StatusOr<cache::InsertResult> inserted = cache_.Insert(tokens.first(position), spec);
  if (!inserted.ok()) {
    DS_LOG_WARN("cache store at {} tokens skipped: {}", position, inserted.status().message());
    PublishStats();
    return;
  }
  cache::DiskWrite disk_write;
  for (const cache::NewBlock& added : inserted->new_blocks) {
    std::vector<uint8_t> bytes(state.KvRowsBytes(block));
    state.CopyKvRows(added.index * block, (added.index + 1) * block, bytes.data());
    Bytes shared = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
    payloads_[added.payload] = shared;
    disk_write.blocks.push_back({added.index, std::move(shared)});
  }
  if (inserted->new_snapshot != 0) {
    std::vector<uint8_t> bytes;
    bytes.reserve(state.KvRowsBytes(tail_rows) + recurrent_bytes);
    bytes.resize(state.KvRowsBytes(tail_rows));
    state.CopyKvRows(position - tail_rows, position, bytes.data());
    if (has_recurrent_state_ && from_state) {
      std::vector<uint8_t> slots;
      state.SnapshotTo(recurrent_only, &slots);
      bytes.insert(bytes.end(), slots.begin(), slots.end());
    } else if (has_recurrent_state_) {
      bytes.insert(bytes.end(), recurrent.begin(), recurrent.end());
    }
    Bytes shared = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
    payloads_[inserted->new_snapshot] = shared;
    disk_write.snapshot = {kind, std::move(shared)};
  }
  if (persist && disk_ != nullptr &&
      (!disk_write.blocks.empty() || disk_write.snapshot.has_value())) {
    disk_write.tokens.assign(tokens.begin(), tokens.begin() + position);
    disk_->Submit(std::move(disk_write));
  }
  PublishStats();
}

void StateCache::PublishStats() {
  cache::CacheStats stats = cache_.stats();
  std::lock_guard<std::mutex> lock(stats_mu_);
  published_stats_ = stats;
}

cache::CacheStats StateCache::stats() const {
  std::lock_guard<std::mutex> lock(stats_mu_);
  return published_stats_;
}

}  // namespace ds::engine
