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

#include "api/anthropic_request.h"
#include "api/errors.h"
#include "api/types.h"
#include "engine/engine.h"
#include "server/generation_runner.h"
#include "server/prompt_builder.h"
#include "server/request_history.h"
#include "server/server_metrics.h"

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
  RequestRecord record;  // the run, for the request ledger (no HTTP fields)
};

struct ChatServiceOptions {
  // Anthropic system blocks starting with one of these are dropped (api/anthropic_request.h).
  std::vector<std::string> volatile_system_prefixes = api::AnthropicParseOptions{}
                                                          .volatile_system_prefixes;
  // Caps every request's output tokens (0: no cap); a request's own smaller limit wins.
  int64_t max_output_tokens = 0;
  // Jinja source that replaces the model's chat template when not empty.
  std::string chat_template;
};

class ChatService {
 public:
  static StatusOr<std::unique_ptr<ChatService>> Create(engine::Engine* engine,
                                                       const text::Tokenizer* tokenizer,
                                                       ChatServiceOptions options = {});

  StatusOr<api::ChatRequest> Parse(api::ApiKind api, const api::Json& body) const;
  // For /health: sequences generating now, requests waiting, and the configured bounds.
  api::Json Load() const;
  // Anthropic count_tokens: the prompt's token count.
  StatusOr<int64_t> CountTokens(const api::ChatRequest& request) const;
  // Conversations the cache kept across a restart, newest first: their next turns tokenise as
  // they did before it (PromptBuilder::SeedContinuity).
  void SeedContinuity(const std::vector<std::vector<int32_t>>& sequences) const {
    prompts_->SeedContinuity(sequences);
  }
  // Builds the prompt and submits it; errors (template, context overflow, busy) as Status.
  StatusOr<std::unique_ptr<StartedRequest>> Start(api::ChatRequest request);

  // Runs to the end and returns the API's response body, or its error shape.
  JsonResponse Complete(StartedRequest* started);
  // Writes SSE frames as output arrives; `write` returning false (client gone) cancels the
  // generation, which then frees its sequence before the next token. Returns the run, for the
  // request ledger (no HTTP fields).
  RequestRecord Stream(StartedRequest* started,
                       const std::function<bool(std::string_view)>& write);

  ServerMetrics& metrics() { return metrics_; }
  RequestHistory& history() { return history_; }

 private:
  ChatService(engine::Engine* engine, const text::Tokenizer* tokenizer,
              std::unique_ptr<PromptBuilder> prompts, ChatServiceOptions options);
  std::string NewId(api::ApiKind api);
  api::AnthropicParseOptions AnthropicOptions() const;
  // Keeps the reply's ids for the continuity memo; called before the client can see the end of
  // the reply, since it may send its next turn at once.
  void RememberReply(const StartedRequest& started, const GenerationOutput& output);
  // Bookkeeping of a request that ran: the engine's metrics and the miss diagnostics; returns
  // its record, outcome and reason included. `client_gone`: a write to the client failed, so
  // the reply did not reach it whole, however far the engine got.
  RequestRecord Finished(const StartedRequest& started, const GenerationOutput& output,
                         bool client_gone);

  engine::Engine* engine_;
  const text::Tokenizer* tokenizer_;
  std::unique_ptr<PromptBuilder> prompts_;
  ChatServiceOptions options_;
  ServerMetrics metrics_;
  RequestHistory history_;
  std::atomic<uint64_t> next_id_{1};
};

}  // namespace ds::server
