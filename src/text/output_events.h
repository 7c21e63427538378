// What a model's generated text means to an API: reasoning, visible content and tool calls,
// emitted incrementally while tokens stream. The output parser produces these events; the API
// formatters turn them into OpenAI or Anthropic stream chunks or a final message.
// Thread safety: plain values.
#pragma once

#include <string>
#include <vector>

namespace ds::text {

struct OutputEvent {
  enum class Kind {
    kReasoningDelta,  // text inside <think>...</think>
    kContentDelta,    // visible assistant text
    kToolCallBegin,   // a tool call starts: tool_index, tool_name, tool_call_id
    kToolCallArgumentsDelta,  // more of the call's arguments as JSON text: tool_index, text
    kToolCallEnd,     // the call's arguments are complete: tool_index
  };
  Kind kind;
  std::string text;
  int tool_index = -1;  // 0-based, in order of appearance
  std::string tool_name;
  std::string tool_call_id;
};

// The whole message once generation ended; equal to folding all events.
struct ParsedToolCall {
  std::string id;
  std::string name;
  std::string arguments_json;  // a JSON object as text
};
struct ParsedOutput {
  std::string reasoning;
  std::string content;
  std::vector<ParsedToolCall> tool_calls;
};

}  // namespace ds::text
