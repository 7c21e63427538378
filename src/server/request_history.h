// What the dashboard shows (GET /v1/stats): the newest requests with their cache outcome and
// timings, totals since start, and cache occupancy per tier over time. Totals are counted at the
// same place as /metrics, so the page and the metrics agree.
// Thread safety: all methods lock; requests finish on many threads.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>

#include "api/types.h"
#include "engine/scheduler.h"
#include "server/prompt_builder.h"

namespace ds::server {

struct RequestRecord {
  int64_t unix_ms = 0;
  std::string id;
  std::string api;
  std::string outcome;       // ok, error, cancelled
  std::string conversation;  // 8 hex digits of the prompt up to its first assistant turn
  int64_t prompt_tokens = 0;
  int64_t cached_memory = 0;
  int64_t cached_disk = 0;
  int64_t computed = 0;
  double queue_ms = 0, restore_ms = 0, prefill_ms = 0, ttft_ms = 0;
  int64_t decode_tokens = 0;
  double decode_tokens_per_s = 0;
  std::string tier;    // memory, disk, none
  std::string reason;  // the cache_limit of the lookup
  // Set when the request reused less than the longest cached prefix it shares.
  int64_t divergence_token = -1;
  int64_t divergence_message = -1;
  std::string divergence_role;
};

// The record of one finished request.
RequestRecord MakeRequestRecord(const std::string& id, api::ApiKind api, const char* outcome,
                                const BuiltPrompt& prompt, const engine::RequestTimings& timings);

struct Occupancy {
  int64_t unix_ms = 0;
  int64_t memory_bytes = 0, memory_snapshots = 0;
  int64_t disk_bytes = 0, disk_snapshots = 0;
};

class RequestHistory {
 public:
  // REQUIRES: engine outlives this object.
  explicit RequestHistory(const engine::Engine* engine);

  void Add(RequestRecord record);
  // {"since_start": totals, "recent": totals over the newest `recent` requests, "requests":
  // newest first, "occupancy": samples, "cache": budgets}; samples occupancy when the last
  // sample is a second old.
  api::Json Stats(size_t recent);

 private:
  struct Totals {
    int64_t requests = 0, lookups = 0, hits_memory = 0, hits_disk = 0;
    int64_t prompt_tokens = 0, cached_memory = 0, cached_disk = 0, computed = 0;
    void Count(const RequestRecord& r);
    api::Json ToJson() const;
  };
  void SampleLocked(int64_t now_ms);

  const engine::Engine* engine_;
  std::mutex mu_;
  std::deque<RequestRecord> records_;  // newest last
  std::deque<Occupancy> occupancy_;
  Totals since_start_;
};

}  // namespace ds::server
