#include "cache/prefix_cache.h"

#include <algorithm>
#include <string>
#include <utility>

#include "base/check.h"

namespace ds::cache {
namespace {

int64_t Size(std::span<const int32_t> tokens) { return static_cast<int64_t>(tokens.size()); }

}  // namespace

PrefixCache::PrefixCache(const CacheOptions& options)
    : options_(options),
      index_(options.block_tokens, options.model_seed, options.chain_hash),
      ghosts_(options.max_ghosts) {
  DS_CHECK(options_.budget_bytes > 0);
}

PrefixCache::~PrefixCache() { DS_CHECK_MSG(num_leases_ == 0, "a cache lease outlived its cache"); }

Match PrefixCache::Lookup(std::span<const int32_t> tokens, const LookupOptions& options) {
  DS_CHECK_MSG(!in_listener_, "the eviction listener called back into the cache");
  DS_CHECK(options.max_restore_bytes >= 0);
  const ResumePlan plan =
      PlanResume(index_, ghosts_, tokens, options.max_restore_bytes, options_.has_recurrent_state);
  for (int64_t k = 1; k <= plan.num_blocks; ++k) {
    Touch(plan.path[k], options_.block_tokens, /*hit=*/true);
  }
  if (plan.tail != 0) {
    // A hybrid snapshot saves the distance to the previous resume point; a dense record its rows.
    int64_t saved = options_.block_tokens;
    if (index_.IsSnapshot(plan.tail)) {
      saved = options_.has_recurrent_state
                  ? plan.saved_tokens
                  : static_cast<int64_t>(index_.snapshot(plan.tail).tail.size());
    }
    Touch(plan.tail, saved, /*hit=*/true);
  }
  counters_.lookups += 1;
  counters_.hits += plan.resume_tokens > 0 ? 1 : 0;
  counters_.resumed_tokens += plan.resume_tokens;
  counters_.lookups_by_limit[static_cast<size_t>(plan.limit)] += 1;
  return MakeMatch(plan);
}

Match PrefixCache::MakeMatch(const ResumePlan& plan) {
  Match match;
  match.resume_tokens = plan.resume_tokens;
  match.restore_bytes = plan.restore_bytes;
  match.longest_match_tokens = plan.longest_match_tokens;
  match.cached_window = plan.cached_window;
  match.limit = plan.limit;
  std::vector<PayloadId> pinned;
  for (int64_t k = 1; k <= plan.num_blocks; ++k) {
    const PayloadId id = plan.path[k];
    match.blocks.push_back(BlockRef{id, index_.block(id).meta.bytes});
    pinned.push_back(id);
  }
  if (plan.tail != 0) {
    TailRef tail;
    tail.payload = plan.tail;
    tail.bytes = index_.meta(plan.tail).bytes;
    tail.begin_tokens = plan.num_blocks * options_.block_tokens;
    tail.num_rows = plan.tail_rows;
    tail.is_snapshot = index_.IsSnapshot(plan.tail);
    tail.record_rows = tail.is_snapshot
                           ? static_cast<int64_t>(index_.snapshot(plan.tail).tail.size())
                           : options_.block_tokens;
    match.tail = tail;
    pinned.push_back(plan.tail);
  }
  if (!pinned.empty()) {
    PinAll(pinned);
    num_leases_ += 1;
    match.lease = Lease(this, std::move(pinned));
  }
  return match;
}

StatusOr<InsertResult> PrefixCache::Insert(std::span<const int32_t> tokens,
                                           const InsertSpec& spec) {
  DS_CHECK_MSG(!in_listener_, "the eviction listener called back into the cache");
  DS_CHECK(spec.block_bytes > 0);
  const bool hybrid = options_.has_recurrent_state;
  DS_CHECK_MSG(!hybrid || spec.snapshot.has_value(), "hybrid models resume only at snapshots");
  DS_CHECK(!spec.snapshot.has_value() || (spec.snapshot->bytes > 0 && !tokens.empty()));
  const int64_t block = options_.block_tokens;
  const int64_t num_full = Size(tokens) / block;
  const bool want_snapshot = spec.snapshot.has_value() && (hybrid || Size(tokens) % block != 0);
  counters_.inserts += 1;

  PrefixIndex::Walk walk = index_.WalkBlocks(tokens);
  const int64_t depth = static_cast<int64_t>(walk.path.size()) - 1;
  InsertResult result;
  if (depth < num_full && walk.collision) {
    counters_.hash_collisions += 1;
    result.hash_collision = true;
    return result;
  }
  std::optional<PayloadId> existing;
  if (want_snapshot && depth == num_full) {
    existing = index_.FindSnapshot(walk.path.back(), tokens.subspan(num_full * block));
  }
  const int64_t new_bytes = (num_full - depth) * spec.block_bytes +
                            (want_snapshot && !existing ? spec.snapshot->bytes : 0);
  std::vector<PayloadId> path = std::move(walk.path);
  PinAll(std::span(path).subspan(1));
  if (existing) index_.Pin(*existing);
  if (index_.pinned_bytes() + new_bytes > options_.budget_bytes) {
    const int64_t pinned = index_.pinned_bytes();
    UnpinAll(std::span(path).subspan(1));
    if (existing) index_.Unpin(*existing);
    counters_.inserts_refused += 1;
    return ResourceExhaustedError("cache insert of " + std::to_string(new_bytes) +
                                  " bytes does not fit the budget of " +
                                  std::to_string(options_.budget_bytes) + " bytes with " +
                                  std::to_string(pinned) + " bytes pinned");
  }
  AddRecords(tokens, spec, want_snapshot && !existing, &path, &result);
  const PayloadId snapshot = existing ? *existing : result.new_snapshot;
  if (snapshot != 0) Touch(snapshot, SnapshotSavedTokens(path, tokens), /*hit=*/false);
  EvictToBudget();
  UnpinAll(std::span(path).subspan(1));
  if (snapshot != 0) index_.Unpin(snapshot);
  return result;
}

void PrefixCache::AddRecords(std::span<const int32_t> tokens, const InsertSpec& spec,
                             bool add_snapshot, std::vector<PayloadId>* path,
                             InsertResult* result) {
  const int64_t block = options_.block_tokens;
  for (size_t k = 1; k < path->size(); ++k) Touch((*path)[k], block, /*hit=*/false);
  const int64_t num_full = Size(tokens) / block;
  for (auto k = static_cast<int64_t>(path->size()) - 1; k < num_full; ++k) {
    std::span<const int32_t> ids = tokens.subspan(k * block, block);
    const PayloadId parent = path->back();
    const Hash128 key = index_.ChildKey(index_.block(parent).key, ids);
    const PayloadId id = index_.AddBlock(parent, key, ids, spec.block_bytes);
    index_.Pin(id);
    Touch(id, block, /*hit=*/false);
    path->push_back(id);
    result->new_blocks.push_back(NewBlock{k, id});
  }
  if (add_snapshot) {
    result->new_snapshot = index_.AddSnapshot(path->back(), tokens.subspan(num_full * block),
                                              spec.snapshot->kind, spec.snapshot->bytes);
    index_.Pin(result->new_snapshot);
  }
}

int64_t PrefixCache::SnapshotSavedTokens(std::span<const PayloadId> path,
                                         std::span<const int32_t> tokens) const {
  const int64_t end = Size(tokens);
  if (!options_.has_recurrent_state) return end % options_.block_tokens;
  std::vector<ResumeCandidate> below = SnapshotsOnPath(index_, path, tokens, end - 1);
  return end - (below.empty() ? 0 : below.back().position);
}

void PrefixCache::Touch(PayloadId id, int64_t saved_tokens, bool hit) {
  RecordMeta& meta = index_.meta(id);
  if (hit) meta.hits += 1;
  if (options_.eviction == EvictionPolicy::kRecency) {
    meta.priority = static_cast<double>(++uses_);
    return;
  }
  const double weight = index_.IsSnapshot(id) ? KindWeight(index_.snapshot(id).kind) : 1.0;
  meta.priority = clock_ + RecordValue(saved_tokens, meta.bytes, meta.hits, weight);
}

void PrefixCache::EvictToBudget() {
  while (index_.used_bytes() > options_.budget_bytes) {
    const std::optional<Victim> victim = ChooseVictim(index_, options_.has_recurrent_state);
    DS_CHECK_MSG(victim.has_value(), "over budget with every record pinned");
    Evict(*victim);
  }
}

void PrefixCache::Evict(const Victim& victim) {
  clock_ = std::max(clock_, victim.priority);
  if (index_.IsSnapshot(victim.id)) {
    EvictSnapshot(victim.id, victim.reason);
  } else {
    EvictBlock(victim.id, victim.reason);
  }
}

void PrefixCache::EvictSnapshot(PayloadId id, EvictReason reason) {
  const SnapshotRecord& record = index_.snapshot(id);
  const BlockNode& node = index_.block(record.node);
  EvictedRecord evicted;
  evicted.payload = id;
  evicted.bytes = record.meta.bytes;
  evicted.is_snapshot = true;
  evicted.kind = record.kind;
  evicted.key = index_.SnapshotKey(record);
  evicted.parent_key = node.key;
  evicted.begin_tokens = node.depth * options_.block_tokens;
  evicted.end_tokens = record.position;
  evicted.ids = record.tail;
  evicted.reason = reason;
  Notify(evicted);
  ghosts_.Add(node.key, record.position, record.tail);
  index_.RemoveSnapshot(id);
}

void PrefixCache::EvictBlock(PayloadId id, EvictReason reason) {
  // Deepest first, so the index stays prefix-closed at every step.
  std::vector<PayloadId> order = {id};
  for (size_t i = 0; i < order.size(); ++i) {
    const std::vector<PayloadId>& children = index_.block(order[i]).children;
    order.insert(order.end(), children.begin(), children.end());
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const std::vector<PayloadId> snapshots = index_.block(*it).snapshots;
    for (PayloadId snapshot : snapshots) EvictSnapshot(snapshot, reason);
    const BlockNode& node = index_.block(*it);
    const BlockNode& parent = index_.block(node.parent);
    EvictedRecord evicted;
    evicted.payload = *it;
    evicted.bytes = node.meta.bytes;
    evicted.key = node.key;
    evicted.parent_key = parent.key;
    evicted.begin_tokens = parent.depth * options_.block_tokens;
    evicted.end_tokens = node.depth * options_.block_tokens;
    evicted.ids = node.ids;
    evicted.reason = reason;
    Notify(evicted);
    ghosts_.Add(parent.key, evicted.end_tokens, node.ids);
    index_.RemoveLeafBlock(*it);
  }
}

void PrefixCache::Notify(const EvictedRecord& record) {
  counters_.evictions[static_cast<size_t>(record.reason)] += 1;
  counters_.evicted_bytes[static_cast<size_t>(record.reason)] += record.bytes;
  if (!listener_) return;
  in_listener_ = true;
  listener_(record);
  in_listener_ = false;
}

void PrefixCache::PinAll(std::span<const PayloadId> ids) {
  for (PayloadId id : ids) index_.Pin(id);
}

void PrefixCache::UnpinAll(std::span<const PayloadId> ids) {
  for (PayloadId id : ids) index_.Unpin(id);
}

void PrefixCache::ReleaseLease(std::span<const PayloadId> ids) {
  UnpinAll(ids);
  num_leases_ -= 1;
}

CacheStats PrefixCache::stats() const {
  CacheStats stats = counters_;
  stats.budget_bytes = options_.budget_bytes;
  stats.used_bytes = index_.used_bytes();
  stats.pinned_bytes = index_.pinned_bytes();
  stats.num_blocks = index_.num_blocks();
  stats.block_bytes = index_.block_bytes();
  for (int k = 0; k < kNumSnapshotKinds; ++k) {
    stats.num_snapshots[k] = index_.num_snapshots(static_cast<SnapshotKind>(k));
    stats.snapshot_bytes[k] = index_.snapshot_bytes(static_cast<SnapshotKind>(k));
  }
  stats.ghosts = ghosts_.size();
  return stats;
}

void PrefixCache::CheckInvariants() const {
  index_.CheckInvariants();
  DS_CHECK_MSG(index_.used_bytes() <= options_.budget_bytes, "cache over budget");
}

}  // namespace ds::cache
