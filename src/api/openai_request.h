// Parsers for the OpenAI request bodies: POST /v1/chat/completions, /v1/completions and
// /v1/responses, into the normalised ChatRequest (api/types.h). Unknown fields are ignored
// (clients send many); a field of the wrong type or out of range is InvalidArgument naming it,
// e.g. "messages[2].content must be a string or an array of content parts"; a feature the
// server cannot serve (images, n > 1, structured output) is InvalidArgument or Unimplemented
// saying so. `defaults` gives the sampling values of fields the request leaves unset.
// Thread safety: stateless functions.
#pragma once

#include "api/types.h"
#include "base/status.h"
#include "engine/sampler.h"

namespace ds::api {

StatusOr<ChatRequest> ParseChatCompletionsRequest(const Json& body,
                                                  const engine::SamplingParams& defaults = {});

// prompt: a string, an array of token ids, or a one-element array holding either (batches of
// several prompts are refused). logprobs: an integer 0..5, the number of alternatives.
StatusOr<ChatRequest> ParseCompletionsRequest(const Json& body,
                                              const engine::SamplingParams& defaults = {});

// input: a string (one user message) or an array of items: messages (roles user, system,
// developer -> system, assistant; content a string or input_text/output_text parts),
// function_call, function_call_output and reasoning items. instructions become the first
// system message. Tools: flat function tools, and the function tools inside "namespace" tools;
// hosted tools (web_search, ...) are ignored since nothing here can run them.
StatusOr<ChatRequest> ParseResponsesRequest(const Json& body,
                                            const engine::SamplingParams& defaults = {});

}  // namespace ds::api
