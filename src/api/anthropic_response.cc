#include "api/anthropic_response.h"

#include <utility>

#include "api/errors.h"
#include "api/output_common.h"

namespace ds::api {
namespace {

Json AnthropicUsage(int64_t prompt_tokens, int64_t cached_tokens, int64_t output_tokens) {
  return Json{{"input_tokens", prompt_tokens - cached_tokens},
              {"cache_creation_input_tokens", 0},
              {"cache_read_input_tokens", cached_tokens},
              {"output_tokens", output_tokens}};
}

const char* StopReason(const FinishInfo& finish, bool has_tool_calls) {
  if (finish.reason == FinishInfo::Reason::kLength) return "max_tokens";
  if (StoppedForTools(finish, has_tool_calls)) return "tool_use";
  if (!finish.stop_sequence.empty()) return "stop_sequence";
  return "end_turn";
}

Json StopSequence(const FinishInfo& finish) {
  if (finish.stop_sequence.empty() || finish.reason == FinishInfo::Reason::kLength) return Json();
  return finish.stop_sequence;
}

}  // namespace

Json BuildAnthropicMessage(const ChatRequest& req, const text::ParsedOutput& output,
                           const FinishInfo& finish, const std::string& id) {
  Json content = Json::array();
  if (!output.reasoning.empty()) {
    content.push_back(
        Json{{"type", "thinking"}, {"thinking", output.reasoning}, {"signature", ""}});
  }
  if (!output.content.empty()) {
    content.push_back(Json{{"type", "text"}, {"text", output.content}});
  }
  for (const text::ParsedToolCall& call : output.tool_calls) {
    content.push_back(Json{{"type", "tool_use"},
                           {"id", call.id},
                           {"name", call.name},
                           {"input", ArgumentsObject(call.arguments_json)}});
  }
  bool has_tools = !output.tool_calls.empty();
  return Json{{"id", id},
              {"type", "message"},
              {"role", "assistant"},
              {"model", req.model},
              {"content", std::move(content)},
              {"stop_reason", StopReason(finish, has_tools)},
              {"stop_sequence", StopSequence(finish)},
              {"usage", AnthropicUsage(finish.prompt_tokens, finish.cached_tokens,
                                       finish.completion_tokens)},
              {"timings", TimingsJson(finish.timings)}};
}

Json BuildCountTokens(int64_t input_tokens) { return Json{{"input_tokens", input_tokens}}; }

AnthropicStream::AnthropicStream(const ChatRequest& req, std::string id)
    : model_(req.model), id_(std::move(id)) {}

std::vector<std::string> AnthropicStream::Begin(int64_t prompt_tokens, int64_t cached_tokens) {
  Json message{{"id", id_},
               {"type", "message"},
               {"role", "assistant"},
               {"model", model_},
               {"content", Json::array()},
               {"stop_reason", nullptr},
               {"stop_sequence", nullptr},
               {"usage", AnthropicUsage(prompt_tokens, cached_tokens, 0)}};
  return {SseEvent("message_start", Json{{"type", "message_start"}, {"message", message}}),
          SseEvent("ping", Json{{"type", "ping"}})};
}

void AnthropicStream::StartBlock(OpenBlock kind, std::vector<std::string>* frames) {
  if (open_ == kind) return;
  CloseTextBlock(frames);
  open_ = kind;
  open_index_ = next_index_++;
  Json block = kind == OpenBlock::kThinking
                   ? Json{{"type", "thinking"}, {"thinking", ""}, {"signature", ""}}
                   : Json{{"type", "text"}, {"text", ""}};
  frames->push_back(SseEvent("content_block_start", Json{{"type", "content_block_start"},
                                                         {"index", open_index_},
                                                         {"content_block", std::move(block)}}));
}

void AnthropicStream::CloseTextBlock(std::vector<std::string>* frames) {
  if (open_ == OpenBlock::kNone) return;
  if (open_ == OpenBlock::kThinking) {
    // No signature can be made here; clients that round-trip thinking blocks need the field.
    Delta(open_index_, Json{{"type", "signature_delta"}, {"signature", ""}}, frames);
  }
  StopBlock(open_index_, frames);
  open_ = OpenBlock::kNone;
  open_index_ = -1;
}

void AnthropicStream::StopBlock(int index, std::vector<std::string>* frames) {
  frames->push_back(
      SseEvent("content_block_stop", Json{{"type", "content_block_stop"}, {"index", index}}));
}

void AnthropicStream::Delta(int index, Json delta, std::vector<std::string>* frames) {
  frames->push_back(SseEvent(
      "content_block_delta",
      Json{{"type", "content_block_delta"}, {"index", index}, {"delta", std::move(delta)}}));
}

std::vector<std::string> AnthropicStream::OnEvent(const text::OutputEvent& event) {
  using Kind = text::OutputEvent::Kind;
  std::vector<std::string> frames;
  switch (event.kind) {
    case Kind::kReasoningDelta:
      if (event.text.empty()) break;
      StartBlock(OpenBlock::kThinking, &frames);
      Delta(open_index_, Json{{"type", "thinking_delta"}, {"thinking", event.text}}, &frames);
      break;
    case Kind::kContentDelta:
      if (event.text.empty()) break;
      StartBlock(OpenBlock::kText, &frames);
      Delta(open_index_, Json{{"type", "text_delta"}, {"text", event.text}}, &frames);
      break;
    case Kind::kToolCallBegin: {
      CloseTextBlock(&frames);
      saw_tool_call_ = true;
      int index = next_index_++;
      tool_blocks_[event.tool_index] = index;
      Json block{{"type", "tool_use"},
                 {"id", event.tool_call_id},
                 {"name", event.tool_name},
                 {"input", Json::object()}};
      frames.push_back(SseEvent("content_block_start", Json{{"type", "content_block_start"},
                                                            {"index", index},
                                                            {"content_block", std::move(block)}}));
      break;
    }
    case Kind::kToolCallArgumentsDelta: {
      auto it = tool_blocks_.find(event.tool_index);
      if (it == tool_blocks_.end() || event.text.empty()) break;
      Delta(it->second, Json{{"type", "input_json_delta"}, {"partial_json", event.text}}, &frames);
      break;
    }
    case Kind::kToolCallEnd: {
      auto it = tool_blocks_.find(event.tool_index);
      if (it == tool_blocks_.end()) break;
      StopBlock(it->second, &frames);
      tool_blocks_.erase(it);
      break;
    }
  }
  return frames;
}

std::vector<std::string> AnthropicStream::Finish(const FinishInfo& finish) {
  std::vector<std::string> frames;
  CloseTextBlock(&frames);
  for (const auto& [tool_index, block_index] : tool_blocks_) StopBlock(block_index, &frames);
  tool_blocks_.clear();
  Json delta{{"type", "message_delta"},
             {"delta",
              {{"stop_reason", StopReason(finish, saw_tool_call_)},
               {"stop_sequence", StopSequence(finish)}}},
             {"usage",
              AnthropicUsage(finish.prompt_tokens, finish.cached_tokens, finish.completion_tokens)},
             {"timings", TimingsJson(finish.timings)}};
  frames.push_back(SseEvent("message_delta", delta));
  frames.push_back(SseEvent("message_stop", Json{{"type", "message_stop"}}));
  return frames;
}

std::vector<std::string> AnthropicStream::Fail(const Status& status) {
  return {SseEvent("error", AnthropicErrorBody(status))};
}

}  // namespace ds::api
