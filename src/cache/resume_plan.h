// Resume planning: where a token sequence can resume, what must be restored for it, and why it
// cannot resume deeper. Pure functions over the index and the ghosts; nothing is pinned or
// touched here (prefix_cache.h does that). Thread-safe as far as the index is.
//
// Rules:
//  - the resume position r is at most tokens.size() - 1, so at least one token is computed and
//    yields logits (a snapshot stores no logits);
//  - hybrid: r is the position of the deepest snapshot on the verified block path whose tail ids
//    equal the tokens there; state = blocks [0, floor(r / B)) + that snapshot;
//  - dense: KV is truncatable, so r = min(longest match, tokens.size() - 1); state = whole blocks
//    below floor(r / B) + the first r mod B rows of a cached block or tail record there;
//  - a deeper resume point whose payloads exceed max_restore_bytes falls back to a shallower one.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "cache/ghosts.h"
#include "cache/prefix_index.h"
#include "cache/types.h"

namespace ds::cache {

struct ResumeCandidate {
  int64_t position = 0;
  PayloadId snapshot = 0;
  int64_t depth = 0;  // of the node it hangs off: blocks restored whole
};

// Snapshots hanging off `path` whose tails equal tokens at their place and whose position is
// <= max_position, by ascending position.
std::vector<ResumeCandidate> SnapshotsOnPath(const PrefixIndex& index,
                                             std::span<const PayloadId> path,
                                             std::span<const int32_t> tokens, int64_t max_position);

struct ResumePlan {
  std::vector<PayloadId> path;  // verified walk, root first
  int64_t resume_tokens = 0;    // r
  int64_t num_blocks = 0;       // path[1..num_blocks] are restored whole
  PayloadId tail = 0;           // snapshot, tail record or block covering [num_blocks * B, r)
  int64_t tail_rows = 0;        // r - num_blocks * B
  int64_t saved_tokens = 0;     // r minus the previous resume point (for the tail's value)
  int64_t restore_bytes = 0;    // declared bytes of every record to restore
  int64_t longest_match_tokens = 0;
  std::vector<int32_t> cached_window;  // cached ids from the divergence on, for diagnostics
  ResumeLimit limit = ResumeLimit::kNothingCached;
};

ResumePlan PlanResume(const PrefixIndex& index, const Ghosts& ghosts,
                      std::span<const int32_t> tokens, int64_t max_restore_bytes,
                      bool has_recurrent_state);

}  // namespace ds::cache
