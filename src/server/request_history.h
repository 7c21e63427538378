// What the dashboard shows (GET /v1/stats): the newest requests, every one whatever its outcome,
// with the cache outcome and timings of those the engine ran; totals since start; and cache
// occupancy per tier over time. Records come from the request ledger (request_ledger.h), which
// also writes the log line and the counters, so the page, the log and /metrics agree.
// Thread safety: all methods lock; requests finish on many threads.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>

#include "api/types.h"
#include "engine/engine.h"
#include "server/prompt_builder.h"

namespace ds::server {

// How a request ended, as the log, /metrics and the dashboard name it.
enum class Outcome {
  kOk,         // answered as asked
  kRejected,   // refused for what the client sent: a 4xx (bad body, too long, wrong key, ...)
  kBusy,       // refused for the server's load: 429, 503
  kError,      // the server failed: another 5xx, or a stream that failed after its 200
  kCancelled,  // the client went away before the reply ended
};
inline constexpr int kNumOutcomes = 5;
const char* OutcomeName(Outcome outcome);
// The outcome a status means by itself (a stream's 200 says nothing of how it ended).
Outcome OutcomeOf(int status);

struct RequestRecord {
  int64_t unix_ms = 0;  // when it ended
  // Every request has these.
  std::string method;  // empty when no request line arrived
  std::string path;
  std::string peer;  // the client's address
  int status = 0;
  Outcome outcome = Outcome::kOk;
  std::string reason;  // why it did not end plainly ok: an error message, "the client went away"
  // The rest is set for requests the engine ran.
  bool ran = false;
  std::string id;
  std::string api;
  std::string conversation;  // 8 hex digits of the prompt up to its first assistant turn
  int64_t prompt_tokens = 0;
  int64_t cached_memory = 0;
  int64_t cached_disk = 0;
  int64_t computed = 0;
  double queue_ms = 0, restore_ms = 0, prefill_ms = 0, ttft_ms = 0;
  int64_t decode_tokens = 0;
  double decode_tokens_per_s = 0;
  std::string tier;         // memory, disk, none
  std::string cache_limit;  // why the lookup stopped where it did
  // Set when the request reused less than the longest cached prefix it shares.
  int64_t divergence_token = -1;
  int64_t divergence_message = -1;
  std::string divergence_role;
};

// The record of a request the engine ran, without the HTTP fields.
RequestRecord MakeRequestRecord(const std::string& id, api::ApiKind api, Outcome outcome,
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

  // REQUIRES: record.unix_ms set.
  void Add(RequestRecord record);
  // {"since_start": totals, "recent": totals over the newest `recent` requests, "requests":
  // newest first, each with method, path, status, outcome and reason, and the engine's figures
  // where "ran", "occupancy": samples, "cache": budgets}; samples occupancy when the last
  // sample is a second old.
  api::Json Stats(size_t recent);

 private:
  struct Totals {
    int64_t requests = 0;
    int64_t outcomes[kNumOutcomes] = {};
    // Of the requests the engine ran.
    int64_t lookups = 0, hits_memory = 0, hits_disk = 0;
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
