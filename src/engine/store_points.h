// Where the prefill of a prompt stops so the cache can store the state there
// (docs/cache.md, "Where snapshots are taken").
// Thread safety: a pure function.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "cache/types.h"

namespace ds::engine {

struct StorePoint {
  int64_t position = 0;
  cache::SnapshotKind kind = cache::SnapshotKind::kPromptEnd;
};

// Ascending, one per position, inside (resumed, n_prompt]: for hybrid models the message
// boundaries, every multiple of interval_tokens (0: none) and the prompt but its last token (where
// an exact repeat of the prompt resumes), then the end of the prompt.
// A message boundary outranks an interval point at the same position. Dense models resume from
// any cached KV prefix, so they store at the end of the prompt only.
std::vector<StorePoint> PlanStorePoints(std::span<const int64_t> boundaries, int64_t n_prompt,
                                        int64_t resumed, int64_t interval_tokens,
                                        bool has_recurrent_state);

}  // namespace ds::engine
