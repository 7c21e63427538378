// Pieces shared by the response builders and stream formatters: JSON text that never throws,
// SSE framing, usage and the deltaserve timings object, finish reasons, logprob records.
// Thread safety: stateless functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/types.h"
#include "text/output_events.h"

namespace ds::api {

// Compact JSON text; invalid UTF-8 (a token piece cut inside a character) becomes U+FFFD
// instead of an exception.
std::string DumpJson(const Json& value);

// "data: <json>\n\n" (OpenAI chunks).
std::string SseData(const Json& value);
// "event: <event>\ndata: <json>\n\n" (Anthropic and the Responses API).
std::string SseEvent(std::string_view event, const Json& value);
inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

// deltaserve's own numbers, on every final response and last chunk:
// {cached_tokens, cached_tokens_by_tier {memory}, prompt_tokens_computed, cache ("hit" or
//  "miss"), cache_limit (why it did not resume deeper), queue_ms, restore_ms, prefill_ms,
//  ttft_ms, decode_tokens, decode_ms, decode_tokens_per_s, prefill_tokens_per_s}.
// prefill_tokens_per_s counts computed tokens only; decode_tokens_per_s the decode window.
Json TimingsJson(const engine::RequestTimings& timings);

// {prompt_tokens, completion_tokens, total_tokens, prompt_tokens_details: {cached_tokens}}.
Json OpenAIUsage(const FinishInfo& finish);

// True when generation stopped normally and produced tool calls.
bool StoppedForTools(const FinishInfo& finish, bool has_tool_calls);
// "stop" | "length" | "tool_calls".
const char* OpenAIFinishReason(const FinishInfo& finish, bool has_tool_calls);

// One token as OpenAI chat and Responses logprobs write it:
// {token, logprob, bytes: [uint8...], top_logprobs: [{token, logprob, bytes}...]} keeping at
// most `top_k` alternatives.
Json TokenLogprobJson(const TokenInfo& token, int64_t top_k);

// A tool call's arguments as an object for Anthropic's input; text that is not a JSON object
// gives {} (the output parser promises an object).
Json ArgumentsObject(const std::string& arguments_json);

}  // namespace ds::api
