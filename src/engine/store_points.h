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
// boundaries, the interval points of IntervalPoints(spacing) and the prompt but its last token
// (where an exact repeat of the prompt resumes), then the end of the prompt.
// A message boundary outranks an interval point at the same position. Dense models resume from
// any cached KV prefix, so they store at the end of the prompt only.
std::vector<StorePoint> PlanStorePoints(std::span<const int64_t> boundaries, int64_t n_prompt,
                                        int64_t resumed, int64_t spacing,
                                        bool has_recurrent_state);

// The interval snapshot positions below `end`: every `spacing` tokens up to 8 * spacing, then
// each about an eighth further on than the one before (a multiple of spacing). A prompt that
// diverges at token d from a cached one then recomputes at most max(spacing, d / 8) tokens before
// d. Their number grows with the logarithm of the prompt's length: with spacing 512, 28 below
// 32k tokens, 40 below 128k, 46 below 256k. None when spacing is 0.
std::vector<int64_t> IntervalPoints(int64_t spacing, int64_t end);

}  // namespace ds::engine
