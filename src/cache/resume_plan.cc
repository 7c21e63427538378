#include "cache/resume_plan.h"

#include <algorithm>

#include "base/check.h"

namespace ds::cache {
namespace {

int64_t CommonPrefix(std::span<const int32_t> a, std::span<const int32_t> b) {
  const size_t limit = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < limit && a[i] == b[i]) ++i;
  return static_cast<int64_t>(i);
}

// The best partial match past the verified path: a child block or snapshot tail of its last node.
struct Extension {
  int64_t tokens = 0;
  PayloadId record = 0;
  int32_t next_cached = kNoToken;  // the record's id where it stops matching, if it goes on
  std::vector<int32_t> window;     // the record's ids from there on, at most a window's worth
};

Extension ExtendPastPath(const PrefixIndex& index, PayloadId node_id,
                         std::span<const int32_t> rest) {
  Extension best;
  auto offer = [&](PayloadId id, std::span<const int32_t> ids) {
    const int64_t common = CommonPrefix(ids, rest);
    const int32_t next = common < static_cast<int64_t>(ids.size()) ? ids[common] : kNoToken;
    const bool longer = common > best.tokens || best.record == 0;
    const bool explains = common == best.tokens && best.next_cached == kNoToken;
    if (longer || explains) {
      const size_t end =
          std::min(ids.size(), static_cast<size_t>(common + kDivergenceWindowTokens));
      best = Extension{common, id, next, {ids.begin() + common, ids.begin() + end}};
    }
  };
  const BlockNode& node = index.block(node_id);
  for (PayloadId id : node.children) offer(id, index.block(id).ids);
  for (PayloadId id : node.snapshots) offer(id, index.snapshot(id).tail);
  return best;
}

// Declared bytes of path blocks 1..k, for every k.
std::vector<int64_t> PathBytes(const PrefixIndex& index, std::span<const PayloadId> path) {
  std::vector<int64_t> sums(path.size(), 0);
  for (size_t k = 1; k < path.size(); ++k) {
    sums[k] = sums[k - 1] + index.block(path[k]).meta.bytes;
  }
  return sums;
}

struct Choice {
  bool guarded = false;          // a deeper point within reach did not fit the restore bytes
  bool snapshot_at_end = false;  // a snapshot sits at tokens.size() exactly
};

Choice ChooseSnapshot(const PrefixIndex& index, std::span<const int32_t> tokens,
                      int64_t max_restore_bytes, ResumePlan* plan) {
  const auto num_tokens = static_cast<int64_t>(tokens.size());
  const std::vector<int64_t> sums = PathBytes(index, plan->path);
  Choice choice;
  int64_t previous = 0;  // the resume point below the current candidate
  for (const ResumeCandidate& c : SnapshotsOnPath(index, plan->path, tokens, num_tokens)) {
    if (c.position == num_tokens) {
      choice.snapshot_at_end = true;
      continue;
    }
    const int64_t saved = c.position - previous;
    previous = c.position;
    const int64_t bytes = sums[c.depth] + index.snapshot(c.snapshot).meta.bytes;
    if (bytes > max_restore_bytes) {
      choice.guarded = true;
      continue;
    }
    choice.guarded = false;  // only a skipped point deeper than the chosen one counts
    plan->saved_tokens = saved;
    plan->resume_tokens = c.position;
    plan->num_blocks = c.depth;
    plan->tail = c.snapshot;
    plan->tail_rows = c.position - c.depth * index.block_tokens();
    plan->restore_bytes = bytes;
  }
  return choice;
}

Choice ChooseKvPrefix(const PrefixIndex& index, std::span<const int32_t> tokens,
                      const Extension& extension, int64_t max_restore_bytes, ResumePlan* plan) {
  const int64_t block = index.block_tokens();
  const auto num_tokens = static_cast<int64_t>(tokens.size());
  const auto depth = static_cast<int64_t>(plan->path.size()) - 1;
  const std::vector<int64_t> sums = PathBytes(index, plan->path);
  const int64_t target = std::min(plan->longest_match_tokens, std::max<int64_t>(num_tokens - 1, 0));
  Choice choice;
  for (int64_t position = target;; position = (position - 1) / block * block) {
    const int64_t k = position / block;
    const int64_t rows = position - k * block;
    PayloadId tail = 0;
    if (rows > 0) tail = k < depth ? plan->path[k + 1] : extension.record;
    const int64_t bytes = sums[k] + (tail != 0 ? index.meta(tail).bytes : 0);
    if (bytes <= max_restore_bytes) {
      plan->resume_tokens = position;
      plan->num_blocks = k;
      plan->tail = tail;
      plan->tail_rows = rows;
      plan->saved_tokens = rows;
      plan->restore_bytes = bytes;
      choice.guarded = position < target;
      return choice;
    }
    DS_CHECK(position > 0);  // position 0 restores nothing and always fits
  }
}

ResumeLimit Explain(const PrefixIndex& index, const Ghosts& ghosts, std::span<const int32_t> tokens,
                    const Choice& choice, const ResumePlan& plan) {
  const auto num_tokens = static_cast<int64_t>(tokens.size());
  const int64_t r = plan.resume_tokens;
  if (num_tokens > 0 && r == num_tokens - 1) return ResumeLimit::kReachedMatch;
  if (choice.guarded) return ResumeLimit::kRestoreGuard;
  if (choice.snapshot_at_end) return ResumeLimit::kSnapshotAtEnd;
  const int64_t block = index.block_tokens();
  for (size_t k = static_cast<size_t>(r / block); k < plan.path.size(); ++k) {
    const Hash128& key = index.block(plan.path[k]).key;
    if (ghosts.AnyDeeper(key, static_cast<int64_t>(k) * block, tokens, r)) {
      return ResumeLimit::kEvicted;
    }
  }
  if (plan.longest_match_tokens == 0) return ResumeLimit::kNothingCached;
  if (r == plan.longest_match_tokens) return ResumeLimit::kReachedMatch;
  return ResumeLimit::kNoSnapshot;
}

}  // namespace

std::vector<ResumeCandidate> SnapshotsOnPath(const PrefixIndex& index,
                                             std::span<const PayloadId> path,
                                             std::span<const int32_t> tokens,
                                             int64_t max_position) {
  const int64_t block = index.block_tokens();
  std::vector<ResumeCandidate> candidates;
  for (size_t k = 0; k < path.size(); ++k) {
    const int64_t begin = static_cast<int64_t>(k) * block;
    for (PayloadId id : index.block(path[k]).snapshots) {
      const SnapshotRecord& record = index.snapshot(id);
      if (record.position > max_position || record.position > static_cast<int64_t>(tokens.size())) {
        continue;
      }
      std::span<const int32_t> here = tokens.subspan(begin, record.tail.size());
      if (std::equal(here.begin(), here.end(), record.tail.begin())) {
        candidates.push_back(ResumeCandidate{record.position, id, static_cast<int64_t>(k)});
      }
    }
  }
  // Path nodes come in depth order; within a node, order by position.
  std::stable_sort(
      candidates.begin(), candidates.end(),
      [](const ResumeCandidate& a, const ResumeCandidate& b) { return a.position < b.position; });
  return candidates;
}

ResumePlan PlanResume(const PrefixIndex& index, const Ghosts& ghosts,
                      std::span<const int32_t> tokens, int64_t max_restore_bytes,
                      bool has_recurrent_state) {
  ResumePlan plan;
  plan.path = index.WalkBlocks(tokens).path;
  const int64_t matched = (static_cast<int64_t>(plan.path.size()) - 1) * index.block_tokens();
  const Extension extension = ExtendPastPath(index, plan.path.back(), tokens.subspan(matched));
  plan.longest_match_tokens = matched + extension.tokens;
  if (plan.longest_match_tokens < static_cast<int64_t>(tokens.size())) {
    plan.cached_window = extension.window;
  }
  const Choice choice = has_recurrent_state
                            ? ChooseSnapshot(index, tokens, max_restore_bytes, &plan)
                            : ChooseKvPrefix(index, tokens, extension, max_restore_bytes, &plan);
  plan.limit = Explain(index, ghosts, tokens, choice, plan);
  return plan;
}

}  // namespace ds::cache
