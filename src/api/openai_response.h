// OpenAI chat completions and completions results: the non-streaming JSON body and the
// streaming chunk sequence ("data: {...}\n\n" frames ending with "data: [DONE]\n\n").
//
// Chat: the message carries content (null when empty and there are tool calls),
// reasoning_content (when non-empty) and tool_calls [{id, type: "function", function: {name,
// arguments: JSON text}}]. Chunks: a first one with delta {role: "assistant", content: ""}; then
// delta {reasoning_content}, {content}, {tool_calls: [{index, id, type, function: {name,
// arguments: ""}}]} when a call begins and {tool_calls: [{index, function: {arguments}}]} for
// its argument text; a last chunk with an empty delta and finish_reason; with include_usage a
// chunk with choices [] and usage. The deltaserve "timings" object rides on the final body and
// on the stream's last chunk.
//
// Logprobs (when the request asked): the caller reports every generated token with OnToken
// before feeding its text to the output parser. Tokens waiting when a content delta is
// emitted go out with it; tokens whose text became reasoning or a tool call are dropped, as
// OpenAI reports logprobs of the visible content only.
//
// Thread safety: a stream object belongs to one request.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "api/types.h"
#include "base/status.h"
#include "text/output_events.h"

namespace ds::api {

// `tokens`: the tokens whose logprobs are reported (used when req.logprobs).
Json BuildChatCompletion(const ChatRequest& req, const text::ParsedOutput& output,
                         const std::vector<TokenInfo>& tokens, const FinishInfo& finish,
                         const std::string& id, int64_t created);

// `text`: the generated text (after stop strings are cut); with req.echo, req.prompt_text is
// prepended. Logprobs: {tokens, token_logprobs, top_logprobs: [{piece: logprob}], text_offset}.
Json BuildCompletion(const ChatRequest& req, const std::string& text,
                     const std::vector<TokenInfo>& tokens, const FinishInfo& finish,
                     const std::string& id, int64_t created);

class ChatCompletionsStream {
 public:
  ChatCompletionsStream(const ChatRequest& req, std::string id, int64_t created);

  std::vector<std::string> Begin();
  std::vector<std::string> OnEvent(const text::OutputEvent& event);
  void OnToken(const TokenInfo& token);
  std::vector<std::string> Finish(const FinishInfo& finish);
  // After Begin: an error frame {"error": {...}} (errors.h shape), then [DONE].
  std::vector<std::string> Fail(const Status& status);

 private:
  Json Chunk(Json delta) const;

  bool logprobs_;
  int64_t top_logprobs_;
  bool include_usage_;
  std::string model_;
  std::string id_;
  int64_t created_;
  std::vector<TokenInfo> pending_tokens_;
  bool saw_tool_call_ = false;
};

// Chunks {id, object: "text_completion", created, model, choices: [{text, index, logprobs,
// finish_reason}]}; a last chunk with text "" and finish_reason; with include_usage a chunk
// with choices [] and usage; then [DONE].
class CompletionsStream {
 public:
  CompletionsStream(const ChatRequest& req, std::string id, int64_t created);

  // With echo, the prompt text as the first chunk.
  std::vector<std::string> Begin();
  std::vector<std::string> OnText(const std::string& text);
  void OnToken(const TokenInfo& token);  // its logprobs go out with the next text
  std::vector<std::string> Finish(const FinishInfo& finish);
  std::vector<std::string> Fail(const Status& status);

 private:
  Json Chunk(const std::string& text, const char* finish_reason);

  bool logprobs_;
  int64_t top_logprobs_;
  bool include_usage_;
  std::string echo_text_;
  std::string model_;
  std::string id_;
  int64_t created_;
  std::vector<TokenInfo> pending_tokens_;
  int64_t text_offset_ = 0;  // bytes of text sent so far, for logprobs.text_offset
};

}  // namespace ds::api
