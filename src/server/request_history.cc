#include "server/request_history.h"

#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "server/prompt_layout.h"
#include "server/server_metrics.h"

namespace ds::server {
namespace {

constexpr size_t kMaxRecords = 500;
constexpr size_t kMaxSamples = 720;
constexpr int64_t kSampleEveryMs = 1000;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The prompt up to its first assistant turn: the same for every turn of one conversation.
std::string ConversationId(const BuiltPrompt& prompt) {
  int64_t end = static_cast<int64_t>(prompt.ids.size());
  for (const PromptMessage& m : prompt.messages) {
    if (m.role == "assistant") {
      end = m.begin;
      break;
    }
  }
  const uint64_t h = XXH3_64bits(prompt.ids.data(), end * sizeof(int32_t));
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%08llx", static_cast<unsigned long long>(h >> 32));
  return buf;
}

// One row of "requests": the engine's figures only for requests it ran.
api::Json RowJson(const RequestRecord& r) {
  api::Json row = {{"unix_ms", r.unix_ms}, {"method", r.method},
                   {"path", r.path},       {"status", r.status},
                   {"outcome", OutcomeName(r.outcome)},
                   {"reason", r.reason},   {"ran", r.ran}};
  if (!r.ran) return row;
  row.update({{"id", r.id},
              {"api", r.api},
              {"conversation", r.conversation},
              {"prompt_tokens", r.prompt_tokens},
              {"cached_tokens", {{"memory", r.cached_memory}, {"disk", r.cached_disk}}},
              {"computed_tokens", r.computed},
              {"queue_ms", r.queue_ms},
              {"restore_ms", r.restore_ms},
              {"prefill_ms", r.prefill_ms},
              {"ttft_ms", r.ttft_ms},
              {"decode_tokens", r.decode_tokens},
              {"decode_tokens_per_s", r.decode_tokens_per_s},
              {"cache", r.cached_memory + r.cached_disk > 0 ? "HIT" : "MISS"},
              {"tier", r.tier},
              {"cache_limit", r.cache_limit}});
  if (r.divergence_token >= 0) {
    row["divergence"] = {{"token", r.divergence_token},
                         {"message", r.divergence_message},
                         {"role", r.divergence_role}};
  }
  return row;
}

}  // namespace

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOk: return "ok";
    case Outcome::kRejected: return "rejected";
    case Outcome::kBusy: return "busy";
    case Outcome::kError: return "error";
    case Outcome::kCancelled: return "cancelled";
  }
  return "unknown";
}

Outcome OutcomeOf(int status) {
  if (status < 400) return Outcome::kOk;
  if (status == 429 || status == 503) return Outcome::kBusy;
  return status < 500 ? Outcome::kRejected : Outcome::kError;
}

RequestRecord MakeRequestRecord(const std::string& id, api::ApiKind api, Outcome outcome,
                                const BuiltPrompt& prompt, const engine::RequestTimings& timings) {
  const engine::Timings& t = timings.generation;
  RequestRecord r;
  r.ran = true;
  r.id = id;
  r.api = ApiName(api);
  r.outcome = outcome;
  r.conversation = ConversationId(prompt);
  r.prompt_tokens = t.prompt_tokens;
  (timings.cache.tier == engine::CacheTier::kDisk ? r.cached_disk : r.cached_memory) =
      t.cached_prompt_tokens;
  r.computed = t.computed_prompt_tokens;
  r.queue_ms = timings.queue_s * 1e3;
  r.restore_ms = timings.cache.restore_s * 1e3;
  r.prefill_ms = t.prefill_s * 1e3;
  r.ttft_ms = timings.ttft_s * 1e3;
  r.decode_tokens = t.generated_tokens;
  r.decode_tokens_per_s = t.decode_tokens_per_s();
  r.tier = engine::CacheTierName(timings.cache.tier);
  r.cache_limit = timings.cache.limit_name();
  const int64_t n = static_cast<int64_t>(prompt.ids.size());
  const int64_t matched = timings.cache.longest_match_tokens;
  if (t.cached_prompt_tokens < std::min(matched, n - 1) && matched < n) {
    r.divergence_token = matched;
    r.divergence_message = MessageAt(prompt.messages, matched);
    if (r.divergence_message >= 0) r.divergence_role = prompt.messages[r.divergence_message].role;
  }
  return r;
}

void RequestHistory::Totals::Count(const RequestRecord& r) {
  ++requests;
  ++outcomes[static_cast<int>(r.outcome)];
  if (!r.ran) return;
  if (r.prompt_tokens > 0) ++lookups;
  hits_memory += r.cached_memory > 0;
  hits_disk += r.cached_disk > 0;
  prompt_tokens += r.prompt_tokens;
  cached_memory += r.cached_memory;
  cached_disk += r.cached_disk;
  computed += r.computed;
}

api::Json RequestHistory::Totals::ToJson() const {
  auto rate = [](int64_t part, int64_t whole) {
    return whole > 0 ? api::Json(static_cast<double>(part) / whole) : api::Json();
  };
  api::Json by_outcome = api::Json::object();
  for (int k = 0; k < kNumOutcomes; ++k) {
    by_outcome[OutcomeName(static_cast<Outcome>(k))] = outcomes[k];
  }
  return {{"requests", requests},
          {"outcomes", std::move(by_outcome)},
          {"lookups", lookups},
          {"hits", {{"memory", hits_memory}, {"disk", hits_disk}}},
          {"hit_rate", {{"memory", rate(hits_memory, lookups)}, {"disk", rate(hits_disk, lookups)}}},
          {"prompt_tokens", prompt_tokens},
          {"cached_tokens", {{"memory", cached_memory}, {"disk", cached_disk}}},
          {"computed_tokens", computed},
          {"cached_share", rate(cached_memory + cached_disk, prompt_tokens)}};
}

RequestHistory::RequestHistory(const engine::Engine* engine) : engine_(engine) {}

void RequestHistory::Add(RequestRecord record) {
  std::lock_guard lock(mu_);
  since_start_.Count(record);
  const int64_t now = record.unix_ms;
  records_.push_back(std::move(record));
  if (records_.size() > kMaxRecords) records_.pop_front();
  SampleLocked(now);
}

void RequestHistory::SampleLocked(int64_t now_ms) {
  const engine::StateCache* cache = engine_->cache();
  Occupancy o;
  o.unix_ms = now_ms;
  if (cache != nullptr) {
    const cache::CacheStats s = cache->stats();
    o.memory_bytes = s.used_bytes;
    for (int64_t n : s.num_snapshots) o.memory_snapshots += n;
    if (cache->disk() != nullptr) {
      const cache::DiskStats d = cache->disk()->stats();
      o.disk_bytes = d.used_bytes;
      for (int64_t n : d.num_snapshots) o.disk_snapshots += n;
    }
  }
  occupancy_.push_back(o);
  if (occupancy_.size() > kMaxSamples) occupancy_.pop_front();
}

api::Json RequestHistory::Stats(size_t recent) {
  std::lock_guard lock(mu_);
  const int64_t now = NowMs();
  if (occupancy_.empty() || now - occupancy_.back().unix_ms >= kSampleEveryMs) SampleLocked(now);
  Totals last;
  api::Json requests = api::Json::array();
  size_t shown = 0;
  for (auto it = records_.rbegin(); it != records_.rend(); ++it, ++shown) {
    if (shown < recent) last.Count(*it);
    requests.push_back(RowJson(*it));
  }
  api::Json occupancy = api::Json::array();
  for (const Occupancy& o : occupancy_) {
    occupancy.push_back({{"unix_ms", o.unix_ms},
                         {"memory_bytes", o.memory_bytes},
                         {"memory_snapshots", o.memory_snapshots},
                         {"disk_bytes", o.disk_bytes},
                         {"disk_snapshots", o.disk_snapshots}});
  }
  api::Json cache = {{"memory_budget_bytes", 0}, {"disk_cap_bytes", nullptr}};
  if (const engine::StateCache* c = engine_->cache(); c != nullptr) {
    cache["memory_budget_bytes"] = c->stats().budget_bytes;
    if (c->disk() != nullptr) cache["disk_cap_bytes"] = c->disk()->stats().cap_bytes;
  }
  return {{"since_start", since_start_.ToJson()},
          {"recent", last.ToJson()},
          {"recent_n", std::min(recent, records_.size())},
          {"requests", std::move(requests)},
          {"occupancy", std::move(occupancy)},
          {"cache", std::move(cache)}};
}

}  // namespace ds::server
