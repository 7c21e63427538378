#include "server/chat_service.h"

#include <chrono>
#include <cstdio>

#include "api/anthropic_request.h"
#include "api/openai_request.h"
#include "base/log.h"
#include "server/generation_runner.h"
#include "server/response_format.h"

namespace ds::server {
namespace {

int64_t UnixSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

const char* IdPrefix(api::ApiKind api) {
  switch (api) {
    case api::ApiKind::kCompletions: return "cmpl-";
    case api::ApiKind::kResponses: return "resp_";
    case api::ApiKind::kAnthropicMessages:
    case api::ApiKind::kAnthropicCountTokens: return "msg_";
    case api::ApiKind::kChatCompletions: break;
  }
  return "chatcmpl-";
}

// Stop ids: the tokenizer's end-of-generation tokens, unless the client asked to ignore them.
engine::RequestOptions EngineRequest(const api::ChatRequest& request, const BuiltPrompt& prompt,
                                     const text::Tokenizer& tokenizer) {
  engine::RequestOptions options;
  options.prompt = prompt.ids;
  options.sampling = request.sampling;
  options.max_new_tokens = request.max_tokens;
  options.top_logprobs = request.logprobs ? std::max<int64_t>(request.top_logprobs, 0) : 0;
  if (!request.ignore_eos) {
    for (int32_t id : tokenizer.eog_ids()) options.stop_ids.insert(id);
  }
  options.boundary_positions = prompt.boundary_positions;
  return options;
}

}  // namespace

ChatService::ChatService(engine::Engine* engine, const text::Tokenizer* tokenizer,
                         std::unique_ptr<PromptBuilder> prompts, ChatServiceOptions options)
    : engine_(engine), tokenizer_(tokenizer), prompts_(std::move(prompts)),
      options_(std::move(options)), metrics_(engine), history_(engine) {}

StatusOr<std::unique_ptr<ChatService>> ChatService::Create(engine::Engine* engine,
                                                           const text::Tokenizer* tokenizer,
                                                           ChatServiceOptions options) {
  DS_ASSIGN_OR_RETURN(std::unique_ptr<PromptBuilder> prompts,
                      PromptBuilder::Create(tokenizer, engine->options().context_tokens,
                                            options.chat_template));
  std::erase(options.volatile_system_prefixes, std::string());
  return std::unique_ptr<ChatService>(
      new ChatService(engine, tokenizer, std::move(prompts), std::move(options)));
}

std::string ChatService::NewId(api::ApiKind api) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%s%010llx%06llx", IdPrefix(api),
                static_cast<unsigned long long>(UnixSeconds()),
                static_cast<unsigned long long>(next_id_++));
  return buf;
}

api::AnthropicParseOptions ChatService::AnthropicOptions() const {
  api::AnthropicParseOptions options;
  options.volatile_system_prefixes = options_.volatile_system_prefixes;
  return options;
}

void ChatService::RememberReply(const StartedRequest& started, const GenerationOutput& output) {
  if (started.request.api != api::ApiKind::kCompletions) {
    prompts_->RecordReply(started.prompt, output.generated_ids);
  }
}

RequestRecord ChatService::Finished(const StartedRequest& started,
                                    const GenerationOutput& output, bool client_gone) {
  const engine::RequestTimings& timings = output.finish.timings;
  const Outcome outcome =
      !output.status.ok() ? Outcome::kError
      : client_gone || output.finish.reason == api::FinishInfo::Reason::kCancelled
          ? Outcome::kCancelled
          : Outcome::kOk;
  metrics_.RecordRequest(started.request.api, OutcomeName(outcome), timings);
  DS_LOG_DEBUG("uid={} continuity: {} leading ids taken from an earlier prompt or reply",
               started.id, started.prompt.continuity_tokens);
  std::string miss = MissDiagnostics(started.id, started.prompt, timings, *tokenizer_);
  if (!miss.empty()) DS_LOG_INFO("{}", miss);
  RequestRecord record =
      MakeRequestRecord(started.id, started.request.api, outcome, started.prompt, timings);
  if (outcome == Outcome::kError) record.reason = output.status.message();
  if (outcome == Outcome::kCancelled) record.reason = "the client went away";
  return record;
}

StatusOr<api::ChatRequest> ChatService::Parse(api::ApiKind kind, const api::Json& body) const {
  switch (kind) {
    case api::ApiKind::kChatCompletions: return api::ParseChatCompletionsRequest(body);
    case api::ApiKind::kCompletions: return api::ParseCompletionsRequest(body);
    case api::ApiKind::kResponses: return api::ParseResponsesRequest(body);
    case api::ApiKind::kAnthropicMessages:
      return api::ParseAnthropicMessagesRequest(body, AnthropicOptions());
    case api::ApiKind::kAnthropicCountTokens:
      return api::ParseAnthropicCountTokensRequest(body, AnthropicOptions());
  }
  return InternalError("unknown API");
}

api::Json ChatService::Load() const {
  return {{"sequences_active", engine_->num_active()},
          {"requests_queued", engine_->num_queued()},
          {"parallel", engine_->options().max_parallel},
          {"max_queue", engine_->options().max_queued}};
}

StatusOr<int64_t> ChatService::CountTokens(const api::ChatRequest& request) const {
  DS_ASSIGN_OR_RETURN(BuiltPrompt prompt, prompts_->Build(request));
  return static_cast<int64_t>(prompt.ids.size());
}

StatusOr<std::unique_ptr<StartedRequest>> ChatService::Start(api::ChatRequest request) {
  auto started = std::make_unique<StartedRequest>();
  const int64_t cap = options_.max_output_tokens;
  if (cap > 0 && (request.max_tokens < 0 || request.max_tokens > cap)) request.max_tokens = cap;
  DS_ASSIGN_OR_RETURN(started->prompt, prompts_->Build(request));
  const int64_t context = engine_->options().context_tokens;
  const auto n_prompt = static_cast<int64_t>(started->prompt.ids.size());
  if (n_prompt >= context) return PromptTooLongError(n_prompt, /*at_least=*/false, context);
  if (request.api == api::ApiKind::kCompletions && request.prompt_is_ids && request.echo) {
    request.prompt_text = tokenizer_->Decode(request.prompt_ids);
  }
  DS_ASSIGN_OR_RETURN(started->handle,
                      engine_->Submit(EngineRequest(request, started->prompt, *tokenizer_)));
  started->request = std::move(request);
  started->id = NewId(started->request.api);
  started->created = UnixSeconds();
  return started;
}

JsonResponse ChatService::Complete(StartedRequest* started) {
  GenerationRunner runner(tokenizer_, started->request, started->prompt, started->handle);
  GenerationOutput output =
      runner.Run([](const std::string&, const std::vector<text::OutputEvent>&,
                    const api::TokenInfo*) { return true; });
  RememberReply(*started, output);
  RequestRecord record = Finished(*started, output, /*client_gone=*/false);
  if (!output.status.ok()) {
    api::HttpError error = api::ErrorResponse(started->request.api, output.status);
    return {error.status, error.body, std::move(record)};
  }
  return {200, BuildFinalResponse(started->request, output, started->id, started->created),
          std::move(record)};
}

RequestRecord ChatService::Stream(StartedRequest* started,
                                  const std::function<bool(std::string_view)>& write) {
  std::unique_ptr<StreamFormat> format =
      MakeStreamFormat(started->request, started->id, started->created);
  bool connected = true;
  auto send = [&](const std::vector<std::string>& frames) {
    for (const std::string& frame : frames) connected = connected && write(frame);
    return connected;
  };
  if (!send(format->Begin(static_cast<int64_t>(started->prompt.ids.size()), 0))) {
    started->handle->Cancel(/*tokens_delivered=*/0);
  }
  GenerationRunner runner(tokenizer_, started->request, started->prompt, started->handle);
  GenerationOutput output = runner.Run(
      [&](const std::string& text, const std::vector<text::OutputEvent>& events,
          const api::TokenInfo* token) { return send(format->OnProgress(text, events, token)); });
  RememberReply(*started, output);
  if (connected) send(output.status.ok() ? format->Finish(output.finish)
                                          : format->Fail(output.status));
  return Finished(*started, output, /*client_gone=*/!connected);
}

}  // namespace ds::server
