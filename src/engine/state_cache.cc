#include "engine/state_cache.h"

#include <algorithm>

#include "base/check.h"
#include "base/clock.h"
#include "base/log.h"

namespace ds::engine {
namespace {

cache::CacheOptions CoreOptions(const StateCacheOptions& options, bool has_recurrent_state) {
  DS_CHECK(options.budget_bytes > 0);
  cache::CacheOptions core;
  core.block_tokens = options.block_tokens;
  core.budget_bytes = options.budget_bytes;
  core.has_recurrent_state = has_recurrent_state;
  return core;
}

}  // namespace

StateCache::StateCache(const StateCacheOptions& options, const state::StateLayout& layout)
    : options_(options),
      has_recurrent_state_(layout.HasRecurrentLayers()),
      cache_(CoreOptions(options, has_recurrent_state_)) {
  cache_.SetEvictionListener(
      [this](const cache::EvictedRecord& record) { payloads_.erase(record.payload); });
  PublishStats();
}

std::span<const uint8_t> StateCache::Payload(cache::PayloadId id) const {
  auto it = payloads_.find(id);
  // A record whose bytes are missing restores nothing, and the size checks turn that into a
  // cold start.
  if (it == payloads_.end()) return {};
  return it->second;
}

CacheLookup StateCache::Restore(std::span<const int32_t> tokens, state::SequenceState* state) {
  const Clock::time_point start = Clock::now();
  state->Clear();
  cache::Match match = cache_.Lookup(tokens);
  CacheLookup lookup;
  lookup.longest_match_tokens = match.longest_match_tokens;
  lookup.limit = match.limit;
  lookup.cached_window = std::move(match.cached_window);
  const int64_t block = options_.block_tokens;
  Status status = OkStatus();
  for (const cache::BlockRef& ref : match.blocks) {
    status = state->AppendKvRows(Payload(ref.payload), block, block);
    if (!status.ok()) break;
  }
  if (status.ok() && match.tail.has_value()) {
    const cache::TailRef& tail = *match.tail;
    std::span<const uint8_t> bytes = Payload(tail.payload);
    const int64_t kv_bytes = state->KvRowsBytes(tail.record_rows);
    if (static_cast<int64_t>(bytes.size()) < kv_bytes) {
      status = InternalError("cached record shorter than its KV rows");
    } else {
      status = state->AppendKvRows(bytes.first(kv_bytes), tail.record_rows, tail.num_rows);
    }
    if (status.ok() && tail.is_snapshot && has_recurrent_state_) {
      status = state->Restore(bytes.subspan(kv_bytes));
    }
  }
  match.lease.Release();
  if (!status.ok() || state->num_tokens() != match.resume_tokens) {
    DS_LOG_ERROR("cache restore failed, computing the prompt cold: {}", status.message());
    state->Clear();
  } else {
    lookup.resumed_tokens = match.resume_tokens;
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
  for (const cache::NewBlock& added : inserted->new_blocks) {
    std::vector<uint8_t> bytes(state.KvRowsBytes(block));
    state.CopyKvRows(added.index * block, (added.index + 1) * block, bytes.data());
    payloads_[added.payload] = std::move(bytes);
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
    payloads_[inserted->new_snapshot] = std::move(bytes);
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
