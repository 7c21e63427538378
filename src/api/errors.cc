#include "api/errors.h"

#include "base/check.h"

namespace ds::api {
namespace {

struct ErrorClass {
  int http_status;
  int anthropic_http_status;
  const char* openai_type;
  const char* openai_code;  // nullptr: JSON null
  const char* anthropic_type;
};

ErrorClass Classify(StatusCode code) {
  switch (code) {
    case StatusCode::kInvalidArgument:
      return {400, 400, "invalid_request_error", nullptr, "invalid_request_error"};
    case StatusCode::kOutOfRange:
      return {400, 400, "invalid_request_error", "context_length_exceeded",
              "invalid_request_error"};
    case StatusCode::kNotFound:
      return {404, 404, "invalid_request_error", "not_found", "not_found_error"};
    case StatusCode::kUnimplemented:
      return {501, 501, "invalid_request_error", "unsupported", "invalid_request_error"};
    case StatusCode::kResourceExhausted:
      return {429, 429, "rate_limit_error", "rate_limit_exceeded", "rate_limit_error"};
    case StatusCode::kUnavailable:
      return {503, 503, "server_error", "overloaded", "overloaded_error"};
    default:
      return {500, 500, "server_error", "server_error", "api_error"};
  }
}

bool IsAnthropic(ApiKind api) {
  return api == ApiKind::kAnthropicMessages || api == ApiKind::kAnthropicCountTokens;
}

Json OpenAIBody(const std::string& message, const char* type, const char* code) {
  return Json{{"error",
               {{"message", message},
                {"type", type},
                {"param", nullptr},
                {"code", code != nullptr ? Json(code) : Json()}}}};
}

Json AnthropicBody(const std::string& message, const char* type) {
  return Json{{"type", "error"}, {"error", {{"type", type}, {"message", message}}}};
}

}  // namespace

Json OpenAIErrorBody(const Status& status) {
  ErrorClass c = Classify(status.code());
  return OpenAIBody(status.message(), c.openai_type, c.openai_code);
}

Json AnthropicErrorBody(const Status& status) {
  return AnthropicBody(status.message(), Classify(status.code()).anthropic_type);
}

std::string OpenAIErrorCode(const Status& status) {
  const char* code = Classify(status.code()).openai_code;
  return code != nullptr ? code : "invalid_request_error";
}

HttpError ErrorResponse(ApiKind api, const Status& status) {
  DS_CHECK(!status.ok());
  ErrorClass c = Classify(status.code());
  if (IsAnthropic(api)) return {c.anthropic_http_status, AnthropicErrorBody(status)};
  return {c.http_status, OpenAIErrorBody(status)};
}

HttpError AuthenticationError(ApiKind api, const std::string& message) {
  if (IsAnthropic(api)) return {401, AnthropicBody(message, "authentication_error")};
  return {401, OpenAIBody(message, "invalid_request_error", "invalid_api_key")};
}

}  // namespace ds::api
