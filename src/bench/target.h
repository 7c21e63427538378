// One server under test and how to talk to it, and the single timed request every mode is made
// of.
// Thread safety: a Target is a plain value; Measure may run on many threads at once.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "bench/http_client.h"
#include "bench/measurement.h"
#include "bench/server_url.h"

namespace ds::bench {

using Json = nlohmann::ordered_json;

enum class PromptApi { kChat, kCompletions };

struct Target {
  ServerUrl url;
  std::string label;    // names the server in reports and charts
  std::string model;    // the "model" field of each request
  std::string api_key;  // sent as a Bearer token and as x-api-key; "" for none
  PromptApi api = PromptApi::kChat;
  double timeout_s = 3600;
  Json extra_body;  // merged into every request body (extra_body.h); null for none
};

// One request's outcome: what was measured, and OK or why the request failed. A request that
// fails keeps what it measured before the failure (TTFT, tokens streamed, elapsed time), since
// a server that drops a long request after streaming for minutes has still shown those.
struct RequestResult {
  Measurement measurement;
  Status status;
  bool ok() const { return status.ok(); }
};

// Sends one streamed request and measures it. `path` is the endpoint ("/v1/chat/completions");
// `headers` are added to the authentication headers, and the target's extra_body is merged into
// `body`. A stream that ends without the server's prompt token count is a failure: no rate could
// be computed from it.
RequestResult Measure(const Target& target, const std::string& path, const Json& body,
                      const HeaderMap& headers = {});

// A streamed request for `prompt` that generates exactly `max_tokens` where the server honours
// ignore_eos (llama.cpp, vLLM and deltaserve do), greedy, with usage in the stream.
RequestResult MeasurePrompt(const Target& target, const std::string& prompt, int64_t max_tokens);

// The model id to send when the user named none: the first one GET /v1/models lists.
StatusOr<std::string> DiscoverModel(const Target& target);

}  // namespace ds::bench
