#include "api/output_common.h"

#include "base/json_depth.h"

namespace ds::api {
namespace {

Json BytesJson(const std::string& piece) {
  Json bytes = Json::array();
  for (unsigned char c : piece) bytes.push_back(static_cast<int>(c));
  return bytes;
}

}  // namespace

std::string DumpJson(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string SseData(const Json& value) { return "data: " + DumpJson(value) + "\n\n"; }

std::string SseEvent(std::string_view event, const Json& value) {
  return "event: " + std::string(event) + "\ndata: " + DumpJson(value) + "\n\n";
}

Json TimingsJson(const engine::RequestTimings& request) {
  const engine::Timings& timings = request.generation;
  return Json{{"cached_tokens", timings.cached_prompt_tokens},
              {"cached_tokens_by_tier",
               {{"memory", request.cache.tier == engine::CacheTier::kMemory
                               ? timings.cached_prompt_tokens
                               : 0},
                {"disk", request.cache.tier == engine::CacheTier::kDisk
                             ? timings.cached_prompt_tokens
                             : 0}}},
              {"prompt_tokens_computed", timings.computed_prompt_tokens},
              {"cache", timings.cached_prompt_tokens > 0 ? "hit" : "miss"},
              {"cache_tier", engine::CacheTierName(request.cache.tier)},
              {"cache_limit", request.cache.limit_name()},
              {"queue_ms", request.queue_s * 1e3},
              {"restore_ms", request.cache.restore_s * 1e3},
              {"prefill_ms", timings.prefill_s * 1e3},
              {"ttft_ms", request.ttft_s * 1e3},
              {"decode_tokens", timings.generated_tokens},
              {"decode_ms", timings.decode_s * 1e3},
              {"decode_tokens_per_s", timings.decode_tokens_per_s()},
              {"prefill_tokens_per_s", timings.prefill_tokens_per_s()}};
}

Json OpenAIUsage(const FinishInfo& finish) {
  return Json{{"prompt_tokens", finish.prompt_tokens},
              {"completion_tokens", finish.completion_tokens},
              {"total_tokens", finish.prompt_tokens + finish.completion_tokens},
              {"prompt_tokens_details", {{"cached_tokens", finish.cached_tokens}}},
              {"completion_tokens_details", {{"reasoning_tokens", finish.reasoning_tokens}}}};
}

bool StoppedForTools(const FinishInfo& finish, bool has_tool_calls) {
  return has_tool_calls && finish.reason != FinishInfo::Reason::kLength;
}

const char* OpenAIFinishReason(const FinishInfo& finish, bool has_tool_calls) {
  if (finish.reason == FinishInfo::Reason::kLength) return "length";
  return has_tool_calls ? "tool_calls" : "stop";
}

Json TokenLogprobJson(const TokenInfo& token, int64_t top_k) {
  Json top = Json::array();
  for (const auto& [piece, logprob] : token.top) {
    if (static_cast<int64_t>(top.size()) >= top_k) break;
    top.push_back(Json{{"token", piece}, {"logprob", logprob}, {"bytes", BytesJson(piece)}});
  }
  return Json{{"token", token.piece},
              {"logprob", token.logprob},
              {"bytes", BytesJson(token.piece)},
              {"top_logprobs", std::move(top)}};
}

Json ArgumentsObject(const std::string& arguments_json) {
  if (!JsonDepthWithin(arguments_json)) return Json::object();
  Json parsed = Json::parse(arguments_json, nullptr, /*allow_exceptions=*/false);
  return parsed.is_object() ? parsed : Json::object();
}

}  // namespace ds::api
