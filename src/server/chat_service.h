// Runs API requests on the engine: parses a body into a ChatRequest, builds the prompt, submits
// it, and answers either with one JSON body or with a stream of SSE frames. HTTP-free: the
// server gives it parsed JSON and a frame writer.
// Thread safety: all methods may be called concurrently from the HTTP threads.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "api/errors.h"
#include "api/types.h"
#include "engine/scheduler.h"
#include "server/prompt_builder.h"

namespace ds::server {

// A request accepted by the engine and not yet answered.
struct StartedRequest {
  api::ChatRequest request;
  BuiltPrompt prompt;
  std::shared_ptr<engine::RequestHandle> handle;
  std::string id;       // "chatcmpl-...", "msg_...", ... per API
  int64_t created = 0;  // unix seconds
};

struct JsonResponse {
  int status = 200;
  api::Json body;
};

class ChatService {
 public:
  static StatusOr<std::unique_ptr<ChatService>> Create(engine::Engine* engine,
                                                       const text::Tokenizer* tokenizer);

  StatusOr<api::ChatRequest> Parse(api::ApiKind api, const api::Json& body) const;
  // For /health: sequences generating now, requests waiting, and the configured bounds.
  api::Json Load() const;
  // Anthropic count_tokens: the prompt's token count.
  StatusOr<int64_t> CountTokens(const api::ChatRequest& request) const;
  // Builds the prompt and submits it; errors (template, context overflow, busy) as Status.
  StatusOr<std::unique_ptr<StartedRequest>> Start(api::ChatRequest request);

  // Runs to the end and returns the API's response body, or its error shape.
  JsonResponse Complete(StartedRequest* started);
  // Writes SSE frames as output arrives; `write` returning false (client gone) cancels the
  // generation, which then frees its sequence before the next token.
  void Stream(StartedRequest* started, const std::function<bool(std::string_view)>& write);

 private:
  ChatService(engine::Engine* engine, const text::Tokenizer* tokenizer,
              std::unique_ptr<PromptBuilder> prompts);
  std::string NewId(api::ApiKind api);

  engine::Engine* engine_;
  const text::Tokenizer* tokenizer_;
  std::unique_ptr<PromptBuilder> prompts_;
  std::atomic<uint64_t> next_id_{1};
};

}  // namespace ds::server
