// OutputParser: turns a model's generated text, fed in pieces as it streams, into reasoning,
// content and tool-call events (text/output_events.h) for the Qwen chat formats:
//   reasoning   <think>\n...\n</think>\n\n   (Qwen3 thinking and Qwen3.5 templates put "<think>\n"
//               in the prompt, so their output starts inside reasoning and only has </think>)
//   JSON calls  <tool_call>\n{"name": "fn", "arguments": {...}}\n</tool_call>   (Qwen3, Qwen3-Next)
//   XML calls   <tool_call>\n<function=fn>\n<parameter=k>\nraw value\n</parameter>\n</function>\n
//               </tool_call>   (Qwen3-Coder, Qwen3.5)
//
// Streaming contract:
// - Text that might be the start of a tag (`<tool_c`, `</thi`, ...) is held back until decided,
//   then released as what it turned out to be. The events, folded, do not depend on how the text
//   was split into pieces, and neither does the text of any kind concatenated.
// - Input must be valid UTF-8; a piece that ends inside a character is held until it completes,
//   so every event's text is whole characters.
// - Whitespace the templates put around the markup is dropped: around the reasoning, after
//   </think>, before and after each call. Content is otherwise verbatim.
// - A call is announced (kToolCallBegin) once its name is known and its arguments can stream:
//   JSON form when `{"name": "...", "arguments": ` and the arguments' `{` have arrived (other
//   layouts wait for </tool_call> and are parsed whole); XML form at `<function=NAME>`. Then come
//   kToolCallArgumentsDelta pieces whose concatenation is a JSON object (equal to the call's
//   final arguments_json) and kToolCallEnd. XML arguments are built as `{"k": "v", "n": 5}`:
//   values of string (or unknown) type stream escaped as they arrive; typed values (see
//   tool_schema.h) are emitted whole at their </parameter>. One leading and one trailing newline
//   of each XML value are removed (as the Qwen3-Coder reference parser does: the template writes
//   exactly those; llama.cpp trims all whitespace, which would corrupt indented code).
//   JSON-form arguments are the model's own text (control characters inside strings escaped).
//
// Malformed output never fails:
// - Before a call is announced, anything that does not fit (unknown structure, invalid JSON,
//   no </tool_call> by the end) comes back as content: exactly the original text, including the
//   whitespace before <tool_call>.
// - After a call is announced its arguments are closed so that they stay valid JSON: an open
//   string and open brackets are closed, and a key, ',' or value that was still incomplete is
//   left out (an unfinished number that is valid so far is kept). This happens when the text
//   ends (e.g. max_tokens) or when JSON-form arguments turn invalid. An XML value cut off by the
//   end is kept as received, short of a partial </parameter> and the newline before it; an XML
//   `<parameter=` cut off before its '>' is left out. Then kToolCallEnd follows, and the rest of
//   that call's block (the left-out text, anything that does not fit, up to and including its
//   </tool_call>) comes back as content. XML calls may hold several <function=...> in one block
//   (as llama.cpp accepts); JSON-form blocks hold one object.
// Thread safety: one instance per stream.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "text/output/json_stream.h"
#include "text/output/tool_schema.h"
#include "text/output_events.h"

namespace ds::text {

struct OutputParserOptions {
  // Split <think>...</think> off as reasoning. When false every byte is content (tool calls are
  // still parsed if enabled).
  bool parse_reasoning = true;
  // The prompt ended with "<think>\n": the output begins inside reasoning. Without it, reasoning
  // is recognised only when the output begins with <think> (after optional whitespace).
  bool starts_in_reasoning = false;
  // Accepted tool-call syntaxes; with neither, <tool_call> is plain content.
  bool json_tool_calls = false;  // Qwen3, Qwen3-Next
  bool xml_tool_calls = false;   // Qwen3-Coder, Qwen3.5
  // The request's tools, to type XML argument values (tool_schema.h). Null: all strings.
  nlohmann::json tools;
  // Tool-call ids are prefix + 24 random ASCII letters and digits.
  std::string tool_call_id_prefix = "call_";
  // Seed of the id generator; unset: std::random_device. Set it for reproducible ids.
  std::optional<uint64_t> tool_call_id_seed;
};

class OutputParser {
 public:
  explicit OutputParser(OutputParserOptions options);

  // Feeds the next piece of generated text; returns the events it completed (possibly none).
  // REQUIRES: !finished().
  std::vector<OutputEvent> Push(std::string_view piece);
  // Generation ended: resolves everything held back, closes an open call.
  // REQUIRES: !finished().
  std::vector<OutputEvent> Finish();
  bool finished() const { return finished_; }

  // All events so far, folded (FoldEvent).
  const ParsedOutput& Result() const { return result_; }

 private:
  enum class Mode : uint8_t {
    kStart,      // may begin with <think>
    kReasoning,  // inside <think>
    kSkipSpace,  // after </think> or </tool_call>: drop whitespace
    kContent,
    kBlockHead,         // after <tool_call>: which syntax?
    kJsonHead,          // `{"name": "...", "arguments": ` not complete yet
    kJsonWholeBlock,    // other JSON layout: wait for </tool_call>, then parse whole
    kJsonArgs,          // streaming the arguments object
    kJsonTail,          // after the arguments: `}` and </tool_call>
    kXmlBody,           // inside <function=...>: parameters or </function>
    kXmlStringValue,    // streaming a string-typed parameter value
    kXmlTypedValue,     // collecting a typed parameter value
    kXmlAfterFunction,  // after </function>: </tool_call> or another <function=
    kBrokenBlock,       // rest of an announced call's block: content up to </tool_call>
  };

  // Handles pending_ in the current mode. Returns false when nothing more can be done without
  // more input (with at_end, once pending_ is empty).
  bool Step(bool at_end);
  bool StepStart(bool at_end);
  bool StepReasoning(bool at_end);
  bool StepContent(bool at_end);
  bool StepBlockHead(bool at_end);
  bool StepJsonHead(bool at_end);
  bool StepJsonWholeBlock(bool at_end);
  bool StepJsonArgs();
  bool StepJsonTail(bool at_end);
  bool StepXmlFunctionTag(bool at_end);
  bool StepXmlBody(bool at_end);
  bool StepXmlStringValue(bool at_end);
  bool StepXmlTypedValue(bool at_end);
  bool StepXmlAfterFunction(bool at_end);
  bool StepBrokenBlock(bool at_end);
  void Drain(bool at_end);
  // At Finish: closes a call whose arguments are still open.
  void CloseOpenCall();

  // The unannounced block text (raw_) was not a call after all: it is content.
  void FallBackToContent();
  // Announces and completes the call in `body` (one JSON object) if it is one; consumes nothing.
  bool TryWholeJsonCall(std::string_view body);
  void BeginCall(std::string name);
  void EndCall();
  void EmitXmlArgument(std::string_view key, std::string_view json_value);
  void Emit(OutputEvent::Kind kind, std::string_view text);
  std::string NextToolCallId();

  OutputParserOptions options_;
  ToolSchemas schemas_;
  std::mt19937_64 rng_;
  Mode mode_;
  bool finished_ = false;
  std::string utf8_tail_;  // an incomplete trailing UTF-8 character of the last piece
  std::string pending_;    // input not yet consumed
  std::string raw_;        // consumed text of a block not yet announced as a call
  bool reasoning_started_ = false;
  bool tail_brace_seen_ = false;
  // The open call.
  int tool_index_ = -1;
  std::string call_name_;
  JsonStreamer json_;
  bool first_param_ = true;
  bool value_started_ = false;
  std::string param_key_;
  std::vector<std::string> param_types_;

  std::vector<OutputEvent> events_;  // of the current Push/Finish
  ParsedOutput result_;
};

// Applies one event to a message being built (Result() is the fold of all events).
void FoldEvent(const OutputEvent& event, ParsedOutput* output);

}  // namespace ds::text
