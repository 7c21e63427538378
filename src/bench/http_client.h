// The benchmark's HTTP calls: a streamed POST timed from the moment the request is sent, and a
// plain GET. Each call opens its own connection, so concurrent clients do not share one.
// Thread safety: free functions; safe to call from many threads at once.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "base/status.h"
#include "bench/server_url.h"
#include "bench/sse_parser.h"

namespace ds::bench {

using HeaderMap = std::map<std::string, std::string>;

// How a streamed POST ended. Not a StatusOr: a request that fails mid-stream has still run for
// `wall_s`, and the caller reports that time beside the events it was handed.
struct StreamedResponse {
  double wall_s = 0;  // request sent to the last byte, or to the failure
  Status status;      // OK, or why the request failed
};

// POSTs `body` (JSON) to url.prefix + path and hands each server-sent event to `on_event` with
// the seconds since the request was sent. A non-2xx status is an error that quotes the body.
StreamedResponse PostStreaming(
    const ServerUrl& url, const std::string& path, const HeaderMap& headers,
    const std::string& body, double timeout_s,
    const std::function<void(const SseEvent&, double t_s)>& on_event);

// GETs url.prefix + path and returns the body of a 2xx response.
StatusOr<std::string> Get(const ServerUrl& url, const std::string& path, const HeaderMap& headers,
                          double timeout_s);

}  // namespace ds::bench
