// What one served request cost and what the cache did for it, as the API responses, the log
// line and the metrics report it. Values only.
#pragma once

#include "engine/generate.h"
#include "engine/state_cache.h"

namespace ds::engine {

struct RequestTimings {
  double queue_s = 0;  // arrival to admission into a sequence
  double ttft_s = 0;   // arrival to the first generated token: queue + restore + prefill
  Timings generation;  // prompt, cached and computed tokens, prefill and decode times
  CacheLookup cache;   // what the prefix cache restored, and why not more
};

}  // namespace ds::engine
