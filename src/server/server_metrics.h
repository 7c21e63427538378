// The server's Prometheus metrics (/metrics; docs/cache.md lists them) and the cache's miss
// diagnostics. Per-request figures come from the engine's RequestTimings; cache occupancy and
// load are read from the engine when the page is rendered.
// Thread safety: all methods may be called concurrently.
#pragma once

#include <string>

#include "api/types.h"
#include "base/metrics.h"
#include "engine/engine.h"
#include "server/prompt_builder.h"

namespace ds::server {

class ServerMetrics {
 public:
  // REQUIRES: engine outlives this object.
  explicit ServerMetrics(const engine::Engine* engine);

  // Counts one request the engine ran; `outcome` is "ok", "error" or "cancelled".
  void RecordRequest(api::ApiKind api, const char* outcome, const engine::RequestTimings& timings);
  // Counts one request answered, whatever its route and outcome (the request ledger's count).
  void RecordHttpRequest(int status, const char* outcome);
  std::string Render() { return registry_.Render(); }

 private:
  void RefreshGauges(MetricsRegistry* registry) const;

  const engine::Engine* engine_;
  MetricsRegistry registry_;
};

// The API's name in metrics and stats: chat_completions, completions, responses, messages,
// count_tokens.
const char* ApiName(api::ApiKind api);

// Empty unless the request reused less than the longest cached prefix it shares (short of the
// last token, which is always computed): then why, where it diverged (token index, the rendered
// message and role holding it) and a decoded window of the request and of the cached sequence
// there, the divergence marked by "|", e.g. `uid=r1 reused 77 of 78 cached matching tokens
// (no_snapshot); diverged at token 78 of 133 in message 2 (assistant): request "…nie|g read…"
// cached "…nie|ly…"`.
std::string MissDiagnostics(const std::string& uid, const BuiltPrompt& prompt,
                            const engine::RequestTimings& timings,
                            const text::Tokenizer& tokenizer);

}  // namespace ds::server
