#include "server/response_format.h"

#include "api/anthropic_response.h"
#include "api/openai_response.h"
#include "api/responses_response.h"

namespace ds::server {
namespace {

// The chat-shaped APIs consume parser events and ignore raw text.
template <typename Stream>
class EventStreamFormat : public StreamFormat {
 public:
  explicit EventStreamFormat(std::unique_ptr<Stream> stream) : stream_(std::move(stream)) {}

  std::vector<std::string> Begin(int64_t prompt_tokens, int64_t cached_tokens) override {
    if constexpr (std::is_same_v<Stream, api::AnthropicStream>) {
      return stream_->Begin(prompt_tokens, cached_tokens);
    } else {
      return stream_->Begin();
    }
  }
  std::vector<std::string> OnProgress(const std::string&,
                                      const std::vector<text::OutputEvent>& events,
                                      const api::TokenInfo* token) override {
    if constexpr (!std::is_same_v<Stream, api::AnthropicStream>) {
      if (token != nullptr) stream_->OnToken(*token);
    }
    std::vector<std::string> frames;
    for (const text::OutputEvent& event : events) {
      std::vector<std::string> more = stream_->OnEvent(event);
      frames.insert(frames.end(), more.begin(), more.end());
    }
    return frames;
  }
  std::vector<std::string> Finish(const api::FinishInfo& finish) override {
    return stream_->Finish(finish);
  }
  std::vector<std::string> Fail(const Status& status) override { return stream_->Fail(status); }

 private:
  std::unique_ptr<Stream> stream_;
};

class CompletionsFormat : public StreamFormat {
 public:
  explicit CompletionsFormat(std::unique_ptr<api::CompletionsStream> stream)
      : stream_(std::move(stream)) {}

  std::vector<std::string> Begin(int64_t, int64_t) override { return stream_->Begin(); }
  std::vector<std::string> OnProgress(const std::string& text,
                                      const std::vector<text::OutputEvent>&,
                                      const api::TokenInfo* token) override {
    if (token != nullptr) stream_->OnToken(*token);
    if (text.empty()) return {};
    return stream_->OnText(text);
  }
  std::vector<std::string> Finish(const api::FinishInfo& finish) override {
    return stream_->Finish(finish);
  }
  std::vector<std::string> Fail(const Status& status) override { return stream_->Fail(status); }

 private:
  std::unique_ptr<api::CompletionsStream> stream_;
};

}  // namespace

std::unique_ptr<StreamFormat> MakeStreamFormat(const api::ChatRequest& request,
                                               const std::string& id, int64_t created) {
  switch (request.api) {
    case api::ApiKind::kCompletions:
      return std::make_unique<CompletionsFormat>(
          std::make_unique<api::CompletionsStream>(request, id, created));
    case api::ApiKind::kResponses:
      return std::make_unique<EventStreamFormat<api::ResponsesStream>>(
          std::make_unique<api::ResponsesStream>(request, id, created));
    case api::ApiKind::kAnthropicMessages:
    case api::ApiKind::kAnthropicCountTokens:
      return std::make_unique<EventStreamFormat<api::AnthropicStream>>(
          std::make_unique<api::AnthropicStream>(request, id));
    case api::ApiKind::kChatCompletions:
      break;
  }
  return std::make_unique<EventStreamFormat<api::ChatCompletionsStream>>(
      std::make_unique<api::ChatCompletionsStream>(request, id, created));
}

api::Json BuildFinalResponse(const api::ChatRequest& request, const GenerationOutput& output,
                             const std::string& id, int64_t created) {
  switch (request.api) {
    case api::ApiKind::kCompletions:
      return api::BuildCompletion(request, output.text, output.tokens, output.finish, id,
                                  created);
    case api::ApiKind::kResponses:
      return api::BuildResponse(request, output.parsed, output.tokens, output.finish, id,
                                created);
    case api::ApiKind::kAnthropicMessages:
    case api::ApiKind::kAnthropicCountTokens:
      return api::BuildAnthropicMessage(request, output.parsed, output.finish, id);
    case api::ApiKind::kChatCompletions:
      break;
  }
  return api::BuildChatCompletion(request, output.parsed, output.tokens, output.finish, id,
                                  created);
}

}  // namespace ds::server
