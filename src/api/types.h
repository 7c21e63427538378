// The API layer's native request and result types: every HTTP API (OpenAI chat completions,
// completions, responses; Anthropic messages) parses into one ChatRequest, and every response
// builder reads the same TokenInfo / FinishInfo records. No HTTP and no model here.
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "engine/generate.h"
#include "engine/request_timings.h"
#include "engine/sampler.h"

namespace ds::api {

// Insertion-ordered JSON: Python dicts keep insertion order, and chat templates iterate tool
// arguments and schemas in that order, so sorting keys would change the rendered prompt.
using Json = nlohmann::ordered_json;

enum class ApiKind {
  kChatCompletions,
  kCompletions,
  kResponses,
  kAnthropicMessages,
  kAnthropicCountTokens,
};

struct ToolChoice {
  enum class Mode { kAuto, kNone, kRequired, kFunction };
  Mode mode = Mode::kAuto;
  std::string function_name;  // set for kFunction
};

// One request of any API, normalised to what a Hugging Face chat template consumes.
struct ChatRequest {
  ApiKind api = ApiKind::kChatCompletions;
  std::string model;  // as the client sent it; any name is served by the loaded model

  // Chat APIs: [{"role": "system"|"user"|"assistant"|"tool", "content": string, ...}].
  // Content parts are concatenated without separator (what the templates do with part lists).
  // A leading run of system messages is merged into one (joined by "\n\n"); later system
  // messages stay where the client put them. Assistant messages may carry "reasoning_content"
  // and "tool_calls": [{"id", "type": "function", "function": {"name", "arguments"}}] where
  // arguments is an object when the client's JSON text parsed as one, else the text. Tool
  // messages carry "tool_call_id" and, when an earlier call with that id names it, "name".
  Json messages = Json::array();
  // null, or [{"type": "function", "function": {"name", "description"?, "parameters"}}].
  Json tools;
  ToolChoice tool_choice;
  bool parallel_tool_calls = true;
  bool add_generation_prompt = true;
  // The last message is an assistant message to continue (Anthropic prefill).
  bool continue_final_message = false;
  // Extra template variables, e.g. {"enable_thinking": false}.
  Json template_kwargs = Json::object();
  // Responses API: the instructions as given (also the leading system message), to echo back.
  std::string instructions;

  engine::SamplingParams sampling;
  int64_t max_tokens = -1;  // -1: until the context is full
  // The llama.cpp and vLLM extension benchmarks use for a fixed decode length: end-of-generation
  // tokens do not end the reply (stop strings and max_tokens still do).
  bool ignore_eos = false;
  std::vector<std::string> stop;
  bool stream = false;
  bool include_usage = false;  // OpenAI stream_options.include_usage
  bool logprobs = false;
  int64_t top_logprobs = 0;

  // /v1/completions: exactly one of prompt_text / prompt_ids is the prompt (prompt_is_ids).
  // With echo, the builders prepend prompt_text to the output; for an id prompt the server
  // fills prompt_text with the detokenised prompt first.
  std::string prompt_text;
  std::vector<int32_t> prompt_ids;
  bool prompt_is_ids = false;
  bool echo = false;

  // /v1/responses: function tools declared inside a "namespace" tool, by function name. The
  // model sees them as plain functions; their calls are reported with that namespace.
  std::map<std::string, std::string> tool_namespaces;
};

// One generated token as the engine saw it, for logprobs.
struct TokenInfo {
  int32_t id = 0;
  std::string piece;  // the token's bytes; may be a partial UTF-8 sequence
  float logprob = 0;
  std::vector<std::pair<std::string, float>> top;  // best alternatives, best first
};

// Why and how a generation ended. A stop with tool calls in the output is reported as a tool
// call stop (finish_reason "tool_calls", stop_reason "tool_use") by the builders.
struct FinishInfo {
  enum class Reason { kStop, kLength, kCancelled };
  Reason reason = Reason::kStop;
  int64_t prompt_tokens = 0;
  int64_t cached_tokens = 0;  // of prompt_tokens, restored from the cache
  int64_t completion_tokens = 0;
  int64_t reasoning_tokens = 0;  // of completion_tokens, inside the reasoning block
  engine::RequestTimings timings;
  std::string stop_sequence;  // the stop string that ended generation, if one did
};

}  // namespace ds::api
