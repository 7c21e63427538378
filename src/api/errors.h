// The one place that turns a Status into an API error: HTTP status and body in the shape of
// each API. OpenAI: {"error": {"message", "type", "param": null, "code"}}. Anthropic:
// {"type": "error", "error": {"type", "message"}}.
//   InvalidArgument    400 invalid_request_error
//   OutOfRange         400 invalid_request_error, code context_length_exceeded (prompt too long)
//   NotFound           404 invalid_request_error / not_found_error
//   Unimplemented      501 invalid_request_error, code unsupported
//   ResourceExhausted  429 rate_limit_error
//   Unavailable        503 server_error / Anthropic overloaded_error (503 for both: the
//                      server's documented busy answer, with Retry-After)
//   anything else      500 server_error / api_error
// Thread safety: stateless functions.
#pragma once

#include <string>

#include "api/types.h"
#include "base/status.h"

namespace ds::api {

struct HttpError {
  int status = 500;
  Json body;
};

// REQUIRES: !status.ok().
HttpError ErrorResponse(ApiKind api, const Status& status);

// 401 for a missing or wrong API key (the server checks keys; the shape lives here).
HttpError AuthenticationError(ApiKind api, const std::string& message);

// The error bodies alone, for errors reported inside a stream that already started.
Json OpenAIErrorBody(const Status& status);
Json AnthropicErrorBody(const Status& status);
// OpenAI's error code for `status` ("context_length_exceeded", ...), or its error type
// when the class has no code (the Responses API requires a code).
std::string OpenAIErrorCode(const Status& status);

}  // namespace ds::api
