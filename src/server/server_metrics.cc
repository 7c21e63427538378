#include "server/server_metrics.h"

#include <algorithm>

#include "base/log.h"

namespace ds::server {
namespace {

// Tokens of context shown on each side of a divergence.
constexpr int64_t kWindowBefore = 8;
constexpr int64_t kWindowAfter = 12;

std::string Window(const text::Tokenizer& tokenizer, std::span<const int32_t> before,
                   std::span<const int32_t> after) {
  return "\"" + LogSafe(tokenizer.Decode(before, /*render_special=*/true)) + "|" +
         LogSafe(tokenizer.Decode(after, /*render_special=*/true)) + "\"";
}

}  // namespace

ServerMetrics::ServerMetrics(const engine::Engine* engine) : engine_(engine) {
  MetricsRegistry& r = registry_;
  r.DeclareCounter("deltaserve_http_requests_total",
                   "Requests answered, whatever their route and outcome (ok, rejected, busy, "
                   "error, cancelled), by status code.");
  r.DeclareCounter("deltaserve_requests_total",
                   "Requests the engine ran, by API and outcome (ok, error, cancelled).");
  r.DeclareCounter("deltaserve_prompt_tokens_offered_total", "Prompt tokens requests carried.");
  r.DeclareCounter("deltaserve_prompt_tokens_computed_total",
                   "Prompt tokens run through the model (cached tokens never count).");
  r.DeclareCounter("deltaserve_prompt_tokens_reused_total",
                   "Prompt tokens restored from the cache, by tier.");
  r.DeclareCounter("deltaserve_generated_tokens_total", "Tokens generated.");
  r.DeclareCounter("deltaserve_cache_restores_total",
                   "Cache lookups by outcome (hit, miss) and the reason they stopped where "
                   "they did.");
  r.DeclareHistogram("deltaserve_ttft_seconds",
                     "Arrival to first token: queue, restore and prefill.",
                     {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300});
  r.DeclareHistogram("deltaserve_decode_tokens_per_second",
                     "Decode rate per request over its decode window.",
                     {1, 2, 5, 10, 20, 30, 50, 75, 100, 150, 250, 500});
  r.DeclareGauge("deltaserve_cache_bytes", "Bytes the cache holds, by tier.");
  r.DeclareGauge("deltaserve_cache_budget_bytes", "Byte budget of the cache, by tier.");
  r.DeclareGauge("deltaserve_cache_blocks", "KV blocks held, by tier.");
  r.DeclareGauge("deltaserve_cache_snapshots", "Snapshots held, by tier and kind.");
  r.DeclareGauge("deltaserve_cache_snapshot_bytes", "Bytes of snapshots, by tier and kind.");
  r.DeclareCounter("deltaserve_cache_evictions_total", "Records evicted, by tier and reason.");
  r.DeclareGauge("deltaserve_disk_cache_writable",
                 "1 while the disk tier writes; 0 while a disk failure has paused it.");
  r.DeclareGauge("deltaserve_disk_cache_pending_bytes", "Payload bytes queued for the disk.");
  r.DeclareCounter("deltaserve_disk_cache_records_written_total", "Records written to disk.");
  r.DeclareCounter("deltaserve_disk_cache_writes_dropped_total",
                   "Disk writes dropped: queue full, too big for the cap, or writing paused.");
  r.DeclareCounter("deltaserve_disk_cache_write_errors_total", "Disk writes that failed.");
  r.DeclareCounter("deltaserve_disk_cache_quarantined_total",
                   "Damaged disk records moved to quarantine, never restored.");
  r.DeclareCounter("deltaserve_disk_cache_bytes_read_total", "Payload bytes restored from disk.");
  r.DeclareGauge("deltaserve_sequences_active", "Sequences generating now.");
  r.DeclareGauge("deltaserve_requests_queued", "Requests waiting for a sequence.");
  r.OnRender([this](MetricsRegistry* registry) { RefreshGauges(registry); });
}

void ServerMetrics::RecordRequest(api::ApiKind api, const char* outcome,
                                  const engine::RequestTimings& timings) {
  MetricsRegistry& r = registry_;
  const engine::Timings& t = timings.generation;
  r.Add("deltaserve_requests_total", {{"api", ApiName(api)}, {"outcome", outcome}}, 1);
  r.Add("deltaserve_prompt_tokens_offered_total", {}, static_cast<double>(t.prompt_tokens));
  r.Add("deltaserve_prompt_tokens_computed_total", {},
        static_cast<double>(t.computed_prompt_tokens));
  for (engine::CacheTier tier : {engine::CacheTier::kMemory, engine::CacheTier::kDisk}) {
    r.Add("deltaserve_prompt_tokens_reused_total", {{"tier", engine::CacheTierName(tier)}},
          timings.cache.tier == tier ? static_cast<double>(t.cached_prompt_tokens) : 0.0);
  }
  r.Add("deltaserve_generated_tokens_total", {}, static_cast<double>(t.generated_tokens));
  if (engine_->cache() != nullptr && t.prompt_tokens > 0) {
    r.Add("deltaserve_cache_restores_total",
          {{"outcome", t.cached_prompt_tokens > 0 ? "hit" : "miss"},
           {"tier", engine::CacheTierName(timings.cache.tier)},
           {"reason", timings.cache.limit_name()}},
          1);
  }
  if (t.generated_tokens > 0) r.Observe("deltaserve_ttft_seconds", {}, timings.ttft_s);
  if (t.generated_tokens > 1 && t.decode_s > 0) {
    r.Observe("deltaserve_decode_tokens_per_second", {}, t.decode_tokens_per_s());
  }
}

void ServerMetrics::RecordHttpRequest(int status, const char* outcome) {
  registry_.Add("deltaserve_http_requests_total",
                {{"status", std::to_string(status)}, {"outcome", outcome}}, 1);
}

void ServerMetrics::RefreshGauges(MetricsRegistry* r) const {
  r->Set("deltaserve_sequences_active", {}, engine_->num_active());
  r->Set("deltaserve_requests_queued", {}, engine_->num_queued());
  if (engine_->cache() == nullptr) return;
  const cache::CacheStats s = engine_->cache()->stats();
  const MetricLabels memory{{"tier", "memory"}};
  r->Set("deltaserve_cache_bytes", memory, static_cast<double>(s.used_bytes));
  r->Set("deltaserve_cache_budget_bytes", memory, static_cast<double>(s.budget_bytes));
  r->Set("deltaserve_cache_blocks", memory, static_cast<double>(s.num_blocks));
  for (int k = 0; k < cache::kNumSnapshotKinds; ++k) {
    const MetricLabels labels{
        {"tier", "memory"}, {"kind", cache::SnapshotKindName(static_cast<cache::SnapshotKind>(k))}};
    r->Set("deltaserve_cache_snapshots", labels, static_cast<double>(s.num_snapshots[k]));
    r->Set("deltaserve_cache_snapshot_bytes", labels, static_cast<double>(s.snapshot_bytes[k]));
  }
  for (int k = 0; k < cache::kNumEvictReasons; ++k) {
    r->Set("deltaserve_cache_evictions_total",
           {{"tier", "memory"},
            {"reason", cache::EvictReasonName(static_cast<cache::EvictReason>(k))}},
           static_cast<double>(s.evictions[k]));
  }
  const cache::DiskTier* disk = engine_->cache()->disk();
  if (disk == nullptr) return;
  const cache::DiskStats d = disk->stats();
  const MetricLabels on_disk{{"tier", "disk"}};
  r->Set("deltaserve_cache_bytes", on_disk, static_cast<double>(d.used_bytes));
  r->Set("deltaserve_cache_budget_bytes", on_disk, static_cast<double>(d.cap_bytes));
  r->Set("deltaserve_cache_blocks", on_disk, static_cast<double>(d.num_blocks));
  for (int k = 0; k < cache::kNumSnapshotKinds; ++k) {
    r->Set("deltaserve_cache_snapshots",
           {{"tier", "disk"}, {"kind", cache::SnapshotKindName(static_cast<cache::SnapshotKind>(k))}},
           static_cast<double>(d.num_snapshots[k]));
  }
  for (int k = 0; k < cache::kNumEvictReasons; ++k) {
    r->Set("deltaserve_cache_evictions_total",
           {{"tier", "disk"},
            {"reason", cache::EvictReasonName(static_cast<cache::EvictReason>(k))}},
           static_cast<double>(d.evictions[k]));
  }
  r->Set("deltaserve_disk_cache_writable", {}, d.writable ? 1.0 : 0.0);
  r->Set("deltaserve_disk_cache_pending_bytes", {}, static_cast<double>(d.pending_bytes));
  r->Set("deltaserve_disk_cache_records_written_total", {}, static_cast<double>(d.records_written));
  r->Set("deltaserve_disk_cache_writes_dropped_total", {}, static_cast<double>(d.writes_dropped));
  r->Set("deltaserve_disk_cache_write_errors_total", {}, static_cast<double>(d.write_errors));
  r->Set("deltaserve_disk_cache_quarantined_total", {}, static_cast<double>(d.quarantined));
  r->Set("deltaserve_disk_cache_bytes_read_total", {}, static_cast<double>(d.bytes_read));
}

const char* ApiName(api::ApiKind api) {
  switch (api) {
    case api::ApiKind::kChatCompletions:
      return "chat_completions";
    case api::ApiKind::kCompletions:
      return "completions";
    case api::ApiKind::kResponses:
      return "responses";
    case api::ApiKind::kAnthropicMessages:
      return "messages";
    case api::ApiKind::kAnthropicCountTokens:
      return "count_tokens";
  }
  return "unknown";
}

std::string MissDiagnostics(const std::string& uid, const BuiltPrompt& prompt,
                            const engine::RequestTimings& timings,
                            const text::Tokenizer& tokenizer) {
  const engine::CacheLookup& lookup = timings.cache;
  const int64_t reused = timings.generation.cached_prompt_tokens;
  const int64_t matched = lookup.longest_match_tokens;
  std::span<const int32_t> ids = prompt.ids;
  const auto num_tokens = static_cast<int64_t>(ids.size());
  // The last prompt token is always computed: its logits start the reply.
  if (reused >= std::min(matched, num_tokens - 1)) return "";
  std::string line = "uid=" + uid + " reused " + std::to_string(reused) + " of " +
                     std::to_string(matched) + " cached matching tokens (" + lookup.limit_name() +
                     ")";
  if (matched >= num_tokens) {
    return line + ": the whole prompt of " + std::to_string(num_tokens) +
           " tokens is cached, but no snapshot lies between " + std::to_string(reused) +
           " and its end";
  }
  line += "; diverged at token " + std::to_string(matched) + " of " + std::to_string(num_tokens);
  const int64_t message = MessageAt(prompt.messages, matched);
  if (message >= 0) {
    line += " in message " + std::to_string(message) + " (" + prompt.messages[message].role + ")";
  }
  const int64_t begin = std::max<int64_t>(0, matched - kWindowBefore);
  std::span<const int32_t> before = ids.subspan(begin, matched - begin);
  std::span<const int32_t> after =
      ids.subspan(matched, std::min(kWindowAfter, num_tokens - matched));
  return line + ": request " + Window(tokenizer, before, after) + " cached " +
         Window(tokenizer, before, lookup.cached_window);
}

}  // namespace ds::server
