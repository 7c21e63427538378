// Parsers for Anthropic request bodies: POST /v1/messages and /v1/messages/count_tokens, into
// the normalised ChatRequest (api/types.h).
//   system: a string or text blocks, joined by "\n" into the first system message (blocks are
//     kept verbatim, including Claude Code's volatile "x-anthropic-billing-header:" block).
//   messages[].role: user, assistant, and system (Claude Code sends one mid-conversation; it
//     stays a system message where it is).
//   content blocks: text; thinking (-> reasoning_content; redacted_thinking is dropped);
//     tool_use (-> tool_calls with the input object as arguments); tool_result (-> a tool
//     message, content a string or text blocks); images and documents are refused.
//   tools {name, description, input_schema} -> OpenAI function tools; Anthropic-defined tools
//     with a "type" other than "custom" are ignored. tool_choice auto|any|tool|none.
//   thinking {type: enabled|adaptive|disabled} -> template_kwargs.enable_thinking; absent means
//     disabled, as in the Anthropic API.
//   A final assistant message is continued (continue_final_message, no generation prompt).
// max_tokens is required for messages, as in the Anthropic API. Field errors name the field.
// Thread safety: stateless functions.
#pragma once

#include "api/types.h"
#include "base/status.h"
#include "engine/sampler.h"

namespace ds::api {

struct AnthropicParseOptions {
  engine::SamplingParams defaults;
  // System blocks whose text starts with one of these are dropped. Clients put per-request
  // values there (Claude Code's billing header carries a hash of the request), which would
  // change the first tokens of every prompt and so defeat the prefix cache.
  std::vector<std::string> volatile_system_prefixes = {"x-anthropic-billing-header:"};
};

StatusOr<ChatRequest> ParseAnthropicMessagesRequest(const Json& body,
                                                    const AnthropicParseOptions& options = {});

// The same body without max_tokens; sampling fields are read but unused.
StatusOr<ChatRequest> ParseAnthropicCountTokensRequest(const Json& body,
                                                       const AnthropicParseOptions& options = {});

}  // namespace ds::api
