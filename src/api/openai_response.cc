#include "api/openai_response.h"

#include <utility>

#include "api/errors.h"
#include "api/output_common.h"

namespace ds::api {
namespace {

Json ChatLogprobs(const std::vector<TokenInfo>& tokens, int64_t top_k) {
  Json content = Json::array();
  for (const TokenInfo& token : tokens) content.push_back(TokenLogprobJson(token, top_k));
  return Json{{"content", std::move(content)}};
}

// Legacy completions logprobs; `offset` is the byte offset of the first token's text.
Json CompletionLogprobs(const std::vector<TokenInfo>& tokens, int64_t top_k, int64_t offset) {
  Json pieces = Json::array(), logprobs = Json::array(), tops = Json::array();
  Json offsets = Json::array();
  for (const TokenInfo& token : tokens) {
    pieces.push_back(token.piece);
    logprobs.push_back(token.logprob);
    Json top = Json::object();
    for (const auto& [piece, logprob] : token.top) {
      if (static_cast<int64_t>(top.size()) >= top_k) break;
      top[piece] = logprob;
    }
    tops.push_back(std::move(top));
    offsets.push_back(offset);
    offset += static_cast<int64_t>(token.piece.size());
  }
  return Json{{"tokens", std::move(pieces)},
              {"token_logprobs", std::move(logprobs)},
              {"top_logprobs", std::move(tops)},
              {"text_offset", std::move(offsets)}};
}

Json ToolCallsJson(const std::vector<text::ParsedToolCall>& calls) {
  Json out = Json::array();
  for (const text::ParsedToolCall& call : calls) {
    out.push_back(Json{{"id", call.id},
                       {"type", "function"},
                       {"function", {{"name", call.name}, {"arguments", call.arguments_json}}}});
  }
  return out;
}

std::vector<std::string> FailFrames(const Status& status) {
  return {SseData(OpenAIErrorBody(status)), std::string(kSseDone)};
}

}  // namespace

Json BuildChatCompletion(const ChatRequest& req, const text::ParsedOutput& output,
                         const std::vector<TokenInfo>& tokens, const FinishInfo& finish,
                         const std::string& id, int64_t created) {
  bool has_tools = !output.tool_calls.empty();
  Json message{{"role", "assistant"}};
  message["content"] = output.content.empty() && has_tools ? Json() : Json(output.content);
  if (!output.reasoning.empty()) message["reasoning_content"] = output.reasoning;
  if (has_tools) message["tool_calls"] = ToolCallsJson(output.tool_calls);
  Json choice{{"index", 0},
              {"message", std::move(message)},
              {"logprobs", req.logprobs ? ChatLogprobs(tokens, req.top_logprobs) : Json()},
              {"finish_reason", OpenAIFinishReason(finish, has_tools)}};
  return Json{{"id", id},
              {"object", "chat.completion"},
              {"created", created},
              {"model", req.model},
              {"choices", Json::array({std::move(choice)})},
              {"usage", OpenAIUsage(finish)},
              {"timings", TimingsJson(finish.timings)}};
}

Json BuildCompletion(const ChatRequest& req, const std::string& text,
                     const std::vector<TokenInfo>& tokens, const FinishInfo& finish,
                     const std::string& id, int64_t created) {
  std::string echo = req.echo ? req.prompt_text : std::string();
  Json logprobs =
      req.logprobs ? CompletionLogprobs(tokens, req.top_logprobs, static_cast<int64_t>(echo.size()))
                   : Json();
  Json choice{{"text", echo + text},
              {"index", 0},
              {"logprobs", std::move(logprobs)},
              {"finish_reason", OpenAIFinishReason(finish, false)}};
  return Json{{"id", id},
              {"object", "text_completion"},
              {"created", created},
              {"model", req.model},
              {"choices", Json::array({std::move(choice)})},
              {"usage", OpenAIUsage(finish)},
              {"timings", TimingsJson(finish.timings)}};
}

ChatCompletionsStream::ChatCompletionsStream(const ChatRequest& req, std::string id,
                                             int64_t created)
    : logprobs_(req.logprobs),
      top_logprobs_(req.top_logprobs),
      include_usage_(req.include_usage),
      model_(req.model),
      id_(std::move(id)),
      created_(created) {}

Json ChatCompletionsStream::Chunk(Json delta) const {
  Json choice{
      {"index", 0}, {"delta", std::move(delta)}, {"logprobs", nullptr}, {"finish_reason", nullptr}};
  return Json{{"id", id_},
              {"object", "chat.completion.chunk"},
              {"created", created_},
              {"model", model_},
              {"choices", Json::array({std::move(choice)})}};
}

std::vector<std::string> ChatCompletionsStream::Begin() {
  return {SseData(Chunk(Json{{"role", "assistant"}, {"content", ""}}))};
}

std::vector<std::string> ChatCompletionsStream::OnEvent(const text::OutputEvent& event) {
  using Kind = text::OutputEvent::Kind;
  Json delta;
  switch (event.kind) {
    case Kind::kReasoningDelta:
      if (event.text.empty()) return {};
      delta = Json{{"reasoning_content", event.text}};
      break;
    case Kind::kContentDelta: {
      if (event.text.empty()) return {};
      Json chunk = Chunk(Json{{"content", event.text}});
      if (logprobs_) chunk["choices"][0]["logprobs"] = ChatLogprobs(pending_tokens_, top_logprobs_);
      pending_tokens_.clear();
      return {SseData(chunk)};
    }
    case Kind::kToolCallBegin:
      saw_tool_call_ = true;
      delta = Json{{"tool_calls",
                    Json::array({{{"index", event.tool_index},
                                  {"id", event.tool_call_id},
                                  {"type", "function"},
                                  {"function", {{"name", event.tool_name}, {"arguments", ""}}}}})}};
      break;
    case Kind::kToolCallArgumentsDelta:
      if (event.text.empty()) return {};
      delta = Json{{"tool_calls", Json::array({{{"index", event.tool_index},
                                                {"function", {{"arguments", event.text}}}}})}};
      break;
    case Kind::kToolCallEnd:
      return {};
  }
  pending_tokens_.clear();  // their text was reasoning or a tool call
  return {SseData(Chunk(std::move(delta)))};
}

void ChatCompletionsStream::OnToken(const TokenInfo& token) {
  if (logprobs_) pending_tokens_.push_back(token);
}

std::vector<std::string> ChatCompletionsStream::Finish(const FinishInfo& finish) {
  Json last = Chunk(Json::object());
  last["choices"][0]["finish_reason"] = OpenAIFinishReason(finish, saw_tool_call_);
  std::vector<std::string> frames;
  if (include_usage_) {
    frames.push_back(SseData(last));
    last = Chunk(Json::object());
    last["choices"] = Json::array();
    last["usage"] = OpenAIUsage(finish);
  }
  last["timings"] = TimingsJson(finish.timings);
  frames.push_back(SseData(last));
  frames.emplace_back(kSseDone);
  return frames;
}

std::vector<std::string> ChatCompletionsStream::Fail(const Status& status) {
  return FailFrames(status);
}

CompletionsStream::CompletionsStream(const ChatRequest& req, std::string id, int64_t created)
    : logprobs_(req.logprobs),
      top_logprobs_(req.top_logprobs),
      include_usage_(req.include_usage),
      echo_text_(req.echo ? req.prompt_text : std::string()),
      model_(req.model),
      id_(std::move(id)),
      created_(created) {}

Json CompletionsStream::Chunk(const std::string& text, const char* finish_reason) {
  Json logprobs;
  if (logprobs_ && !pending_tokens_.empty()) {
    logprobs = CompletionLogprobs(pending_tokens_, top_logprobs_, text_offset_);
  }
  pending_tokens_.clear();
  text_offset_ += static_cast<int64_t>(text.size());
  Json choice{{"text", text},
              {"index", 0},
              {"logprobs", std::move(logprobs)},
              {"finish_reason", finish_reason != nullptr ? Json(finish_reason) : Json()}};
  return Json{{"id", id_},
              {"object", "text_completion"},
              {"created", created_},
              {"model", model_},
              {"choices", Json::array({std::move(choice)})}};
}

std::vector<std::string> CompletionsStream::Begin() {
  if (echo_text_.empty()) return {};
  return {SseData(Chunk(echo_text_, nullptr))};
}

std::vector<std::string> CompletionsStream::OnText(const std::string& text) {
  if (text.empty()) return {};
  return {SseData(Chunk(text, nullptr))};
}

void CompletionsStream::OnToken(const TokenInfo& token) {
  if (logprobs_) pending_tokens_.push_back(token);
}

std::vector<std::string> CompletionsStream::Finish(const FinishInfo& finish) {
  Json last = Chunk("", OpenAIFinishReason(finish, false));
  std::vector<std::string> frames;
  if (include_usage_) {
    frames.push_back(SseData(last));
    last["choices"] = Json::array();
    last["usage"] = OpenAIUsage(finish);
  }
  last["timings"] = TimingsJson(finish.timings);
  frames.push_back(SseData(last));
  frames.emplace_back(kSseDone);
  return frames;
}

std::vector<std::string> CompletionsStream::Fail(const Status& status) {
  return FailFrames(status);
}

}  // namespace ds::api
