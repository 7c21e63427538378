#include "bench/target.h"

#include "bench/extra_body.h"
#include "bench/stream_observer.h"

namespace ds::bench {
namespace {

HeaderMap AuthHeaders(const Target& target) {
  HeaderMap headers;
  if (!target.api_key.empty()) {
    headers["Authorization"] = "Bearer " + target.api_key;
    headers["x-api-key"] = target.api_key;
  }
  return headers;
}

}  // namespace

RequestResult Measure(const Target& target, const std::string& path, const Json& body,
                      const HeaderMap& headers) {
  HeaderMap all = AuthHeaders(target);
  for (const auto& [name, value] : headers) all[name] = value;
  StreamObserver observer;
  StreamedResponse response = PostStreaming(
      target.url, path, all, WithExtraBody(body, target.extra_body).dump(), target.timeout_s,
      [&](const SseEvent& event, double t_s) { observer.OnEvent(event, t_s); });
  // An error the server streamed says why better than the broken connection that may follow.
  RequestResult result{observer.Finish(response.wall_s),
                       observer.status().ok() ? response.status : observer.status()};
  if (result.ok() && result.measurement.prompt_tokens < 0) {
    result.status = DataLossError("POST " + target.url.text + path +
                                  ": the server reported no prompt token count (usage) in its "
                                  "stream");
  }
  return result;
}

RequestResult MeasurePrompt(const Target& target, const std::string& prompt, int64_t max_tokens) {
  Json body = {{"model", target.model},
               {"stream", true},
               {"stream_options", {{"include_usage", true}}},
               {"max_tokens", max_tokens},
               {"temperature", 0},
               {"ignore_eos", true}};
  if (target.api == PromptApi::kCompletions) {
    body["prompt"] = prompt;
    return Measure(target, "/v1/completions", body);
  }
  body["messages"] = Json::array({{{"role", "user"}, {"content", prompt}}});
  return Measure(target, "/v1/chat/completions", body);
}

StatusOr<std::string> DiscoverModel(const Target& target) {
  DS_ASSIGN_OR_RETURN(std::string text, Get(target.url, "/v1/models", AuthHeaders(target), 30));
  Json models = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (models.is_object() && models.contains("data") && models["data"].is_array() &&
      !models["data"].empty() && models["data"][0].is_object() &&
      models["data"][0].contains("id") && models["data"][0]["id"].is_string()) {
    return models["data"][0]["id"].get<std::string>();
  }
  return DataLossError("GET " + target.url.text + "/v1/models listed no model; pass --model");
}

}  // namespace ds::bench
