// Anthropic messages results: the non-streaming message, the SSE event sequence, and the
// count_tokens body.
//
// Message: {id, type: "message", role: "assistant", model, content: [blocks], stop_reason,
// stop_sequence, usage: {input_tokens, output_tokens, cache_creation_input_tokens,
// cache_read_input_tokens}, timings}. Blocks in order: thinking {thinking, signature: ""}, text,
// tool_use {id, name, input: object}. input_tokens counts the prompt tokens not read from the
// cache, as Anthropic does (input + cache_read = the whole prompt). stop_reason: max_tokens,
// stop_sequence (with stop_sequence set), tool_use, or end_turn.
//
// Stream: message_start (content [], usage with the prompt counts and output_tokens 0), ping;
// per block content_block_start, content_block_delta (thinking_delta, text_delta,
// input_json_delta), content_block_stop (a thinking block gets a signature_delta first); then
// message_delta {delta: {stop_reason, stop_sequence}, usage: {...}, timings}, message_stop.
// A text or thinking block stays open across deltas of its kind and closes when another block
// starts; a tool_use block closes at its call's end.
//
// Thread safety: a stream object belongs to one request.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "api/types.h"
#include "base/status.h"
#include "text/output_events.h"

namespace ds::api {

Json BuildAnthropicMessage(const ChatRequest& req, const text::ParsedOutput& output,
                           const FinishInfo& finish, const std::string& id);

// {"input_tokens": n}.
Json BuildCountTokens(int64_t input_tokens);

class AnthropicStream {
 public:
  AnthropicStream(const ChatRequest& req, std::string id);

  std::vector<std::string> Begin(int64_t prompt_tokens, int64_t cached_tokens);
  std::vector<std::string> OnEvent(const text::OutputEvent& event);
  std::vector<std::string> Finish(const FinishInfo& finish);
  // After Begin: "event: error" with the Anthropic error body.
  std::vector<std::string> Fail(const Status& status);

 private:
  enum class OpenBlock { kNone, kThinking, kText };

  void StartBlock(OpenBlock kind, std::vector<std::string>* frames);
  void CloseTextBlock(std::vector<std::string>* frames);
  void StopBlock(int index, std::vector<std::string>* frames);
  void Delta(int index, Json delta, std::vector<std::string>* frames);

  std::string model_;
  std::string id_;
  OpenBlock open_ = OpenBlock::kNone;
  int open_index_ = -1;
  int next_index_ = 0;
  std::map<int, int> tool_blocks_;  // tool_index -> block index, while the call is open
  bool saw_tool_call_ = false;
};

}  // namespace ds::api
