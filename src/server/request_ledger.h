// The one place where the end of a request is written down, whatever its outcome and wherever
// it was decided (a refusal in the reception, a handler, the HTTP library's own errors, the end
// of a stream): one log line at info level, one count in
// deltaserve_http_requests_total{status, outcome}, and one row of the dashboard's history. Its
// callers record each request once; the log, /metrics and the dashboard then always agree.
// Reasons and paths are kept to their first 240 bytes.
// Thread safety: Record may be called concurrently.
#pragma once

#include <string>

#include "server/request_history.h"
#include "server/server_metrics.h"

namespace ds::server {

// `METHOD PATH STATUS OUTCOME from ADDRESS: REASON`. A request the engine ran adds its cache
// figures before any reason (`uid=ID HIT(tier)` or `MISS(limit)`, then cached, prefill,
// restore, ttft and decode, as RequestLogLine of server_metrics.h writes them).
std::string RequestLogLine(const RequestRecord& record);

// The request as the HTTP front saw it.
struct RequestHead {
  std::string method;  // both empty when no request line arrived
  std::string path;
  std::string peer;  // the client's address
};

class RequestLedger {
 public:
  // REQUIRES: metrics and history outlive this object.
  RequestLedger(ServerMetrics* metrics, RequestHistory* history);

  // A request that ended with `status`. `run` is the engine's record of a request it ran, whose
  // outcome stands (a stream's 200 may have ended cancelled); for any other request it carries
  // only the reason, and the outcome is the one the status means.
  void Record(const RequestHead& head, int status, RequestRecord run);
  // A request the engine did not run.
  void Record(const RequestHead& head, int status, std::string reason);

 private:
  ServerMetrics* metrics_;
  RequestHistory* history_;
};

}  // namespace ds::server
