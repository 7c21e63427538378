// The API layer: OpenAI (chat completions, completions, responses, models) and Anthropic
// (messages, count_tokens) JSON <-> native structs, and SSE framing. Pure functions and small
// per-request formatters; no HTTP, no model, no exceptions (malformed input is a Status, JSON
// text is produced with invalid UTF-8 replaced).
//
// How the server uses it, per request:
//   1. Parse the body with Json::parse (insertion-ordered, see types.h) without exceptions;
//      a parse failure is InvalidArgument. Call the API's Parse*Request -> ChatRequest, or
//      ErrorResponse(api, status) on error.
//   2. Render req.messages / req.tools with the chat template (req.template_kwargs,
//      add_generation_prompt, continue_final_message), tokenize, generate with req.sampling,
//      req.max_tokens and req.stop.
//   3. Non-streaming: Build* with the parsed output, the token logprobs and a FinishInfo.
//      Streaming: one *Stream object; write Begin(), then per token OnToken() and OnEvent()
//      for each output-parser event, then Finish(); on a failure after Begin, Fail(status).
//      Every call returns complete SSE frames to write as they are.
// Errors before streaming starts go out as ErrorResponse(api, status) with its HTTP status.
// Write every JSON body with DumpJson (output_common.h): token pieces may be partial UTF-8, and
// nlohmann's dump() throws on those.
#pragma once

#include "api/anthropic_request.h"
#include "api/anthropic_response.h"
#include "api/errors.h"
#include "api/models.h"
#include "api/openai_request.h"
#include "api/openai_response.h"
#include "api/output_common.h"
#include "api/responses_response.h"
#include "api/types.h"
