// Response builders, stream formatters, error shapes and the models list: exact JSON shapes and
// SSE frame sequences for a scripted generation (reasoning, content, two parallel tool calls).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/api.h"

namespace ds::api {
namespace {

using Kind = text::OutputEvent::Kind;

struct Frame {
  std::string event;  // empty for OpenAI chunks
  Json data;          // null for [DONE]
};

// Splits one SSE frame; fails the test when it is not "[event: X\n]data: <json>\n\n".
Frame ParseFrame(const std::string& frame) {
  Frame out;
  EXPECT_TRUE(frame.ends_with("\n\n")) << frame;
  std::string rest = frame.substr(0, frame.size() - 2);
  if (rest.starts_with("event: ")) {
    size_t newline = rest.find('\n');
    out.event = rest.substr(7, newline - 7);
    rest = rest.substr(newline + 1);
  }
  EXPECT_TRUE(rest.starts_with("data: ")) << frame;
  rest = rest.substr(6);
  if (rest != "[DONE]") {
    out.data = Json::parse(rest, nullptr, false);
    EXPECT_FALSE(out.data.is_discarded()) << frame;
  }
  return out;
}

std::vector<Frame> ParseFrames(const std::vector<std::string>& frames) {
  std::vector<Frame> out;
  for (const std::string& f : frames) out.push_back(ParseFrame(f));
  return out;
}

void Append(std::vector<std::string>* all, const std::vector<std::string>& more) {
  all->insert(all->end(), more.begin(), more.end());
}

// The scripted generation: reasoning in two deltas, content, two tool calls in a row.
std::vector<text::OutputEvent> ScriptedEvents() {
  return {
      {Kind::kReasoningDelta, "Let me ", -1, "", ""},
      {Kind::kReasoningDelta, "think.", -1, "", ""},
      {Kind::kContentDelta, "Hi", -1, "", ""},
      {Kind::kToolCallBegin, "", 0, "get_weather", "call_0"},
      {Kind::kToolCallArgumentsDelta, "{\"city\":", 0, "", ""},
      {Kind::kToolCallArgumentsDelta, "\"Paris\"}", 0, "", ""},
      {Kind::kToolCallEnd, "", 0, "", ""},
      {Kind::kToolCallBegin, "", 1, "get_time", "call_1"},
      {Kind::kToolCallArgumentsDelta, "{\"tz\":\"CET\"}", 1, "", ""},
      {Kind::kToolCallEnd, "", 1, "", ""},
  };
}

text::ParsedOutput ScriptedOutput() {
  return {"Let me think.",
          "Hi",
          {{"call_0", "get_weather", "{\"city\":\"Paris\"}"},
           {"call_1", "get_time", "{\"tz\":\"CET\"}"}}};
}

FinishInfo ScriptedFinish() {
  FinishInfo finish;
  finish.reason = FinishInfo::Reason::kStop;
  finish.prompt_tokens = 100;
  finish.cached_tokens = 60;
  finish.completion_tokens = 21;
  finish.reasoning_tokens = 4;
  engine::Timings& t = finish.timings.generation;
  t.prompt_tokens = 100;
  t.cached_prompt_tokens = 60;
  t.computed_prompt_tokens = 40;
  t.prefill_s = 0.5;
  t.generated_tokens = 21;
  t.decode_s = 2.0;
  finish.timings.queue_s = 0.25;
  finish.timings.cache.restore_s = 0.125;
  finish.timings.ttft_s = 0.875;
  finish.timings.cache.limit = cache::ResumeLimit::kReachedMatch;
  finish.timings.cache.tier = engine::CacheTier::kDisk;
  return finish;
}

ChatRequest Request(ApiKind api) {
  ChatRequest req;
  req.api = api;
  req.model = "qwen-test";
  return req;
}

const Json kTimings = Json::parse(R"({"cached_tokens": 60,
    "cached_tokens_by_tier": {"memory": 0, "disk": 60}, "prompt_tokens_computed": 40,
    "cache": "hit", "cache_tier": "disk", "cache_limit": "reached_match", "queue_ms": 250.0,
    "restore_ms": 125.0,
    "prefill_ms": 500.0, "ttft_ms": 875.0, "decode_tokens": 21, "decode_ms": 2000.0,
    "decode_tokens_per_s": 10.0, "prefill_tokens_per_s": 80.0})");

TEST(ChatStreamTest, ScriptedSequence) {
  ChatRequest req = Request(ApiKind::kChatCompletions);
  req.include_usage = true;
  ChatCompletionsStream stream(req, "chatcmpl-1", 1700000000);
  std::vector<std::string> raw = stream.Begin();
  for (const auto& event : ScriptedEvents()) Append(&raw, stream.OnEvent(event));
  Append(&raw, stream.Finish(ScriptedFinish()));
  std::vector<Frame> frames = ParseFrames(raw);
  ASSERT_EQ(frames.size(), 12u);
  EXPECT_EQ(frames[0].data, Json::parse(R"({"id": "chatcmpl-1",
      "object": "chat.completion.chunk", "created": 1700000000, "model": "qwen-test",
      "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                   "logprobs": null, "finish_reason": null}]})"));
  std::vector<Json> deltas;
  for (size_t i = 1; i <= 9; ++i) {
    EXPECT_TRUE(frames[i].event.empty());
    EXPECT_EQ(frames[i].data["object"], "chat.completion.chunk");
    deltas.push_back(frames[i].data["choices"][0]["delta"]);
  }
  EXPECT_EQ(deltas[0], Json::parse(R"({"reasoning_content": "Let me "})"));
  EXPECT_EQ(deltas[1], Json::parse(R"({"reasoning_content": "think."})"));
  EXPECT_EQ(deltas[2], Json::parse(R"({"content": "Hi"})"));
  EXPECT_EQ(deltas[3], Json::parse(R"({"tool_calls": [{"index": 0, "id": "call_0",
      "type": "function", "function": {"name": "get_weather", "arguments": ""}}]})"));
  EXPECT_EQ(deltas[4], Json::parse(R"({"tool_calls": [{"index": 0,
      "function": {"arguments": "{\"city\":"}}]})"));
  EXPECT_EQ(deltas[5], Json::parse(R"({"tool_calls": [{"index": 0,
      "function": {"arguments": "\"Paris\"}"}}]})"));
  EXPECT_EQ(deltas[6]["tool_calls"][0]["index"], 1);
  EXPECT_EQ(deltas[6]["tool_calls"][0]["id"], "call_1");
  EXPECT_EQ(deltas[7], Json::parse(R"({"tool_calls": [{"index": 1,
      "function": {"arguments": "{\"tz\":\"CET\"}"}}]})"));
  EXPECT_EQ(deltas[8], Json::object());
  EXPECT_EQ(frames[9].data["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_EQ(frames[10].data["choices"], Json::array());
  EXPECT_EQ(frames[10].data["usage"], Json::parse(R"({"prompt_tokens": 100,
      "completion_tokens": 21, "total_tokens": 121, "prompt_tokens_details":
      {"cached_tokens": 60}, "completion_tokens_details": {"reasoning_tokens": 4}})"));
  EXPECT_EQ(frames[10].data["timings"], kTimings);
  EXPECT_TRUE(frames[11].data.is_null());
  EXPECT_EQ(raw.back(), "data: [DONE]\n\n");
}

TEST(ChatStreamTest, WithoutUsageTheFinishChunkCarriesTimings) {
  ChatCompletionsStream stream(Request(ApiKind::kChatCompletions), "c", 1);
  FinishInfo finish = ScriptedFinish();
  finish.reason = FinishInfo::Reason::kLength;
  std::vector<Frame> frames = ParseFrames(stream.Finish(finish));
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].data["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(frames[0].data["timings"], kTimings);
  EXPECT_FALSE(frames[0].data.contains("usage"));
}

TEST(ChatStreamTest, LogprobsRideOnContentOnly) {
  ChatRequest req = Request(ApiKind::kChatCompletions);
  req.logprobs = true;
  req.top_logprobs = 1;
  ChatCompletionsStream stream(req, "c", 1);
  stream.OnToken({1, "think", -0.5f, {}});
  EXPECT_EQ(stream.OnEvent({Kind::kReasoningDelta, "think", -1, "", ""}).size(), 1u);
  stream.OnToken({2, "H", -0.25f, {{"H", -0.25f}, {"h", -2.0f}}});
  stream.OnToken({3, "i", -0.125f, {}});
  std::vector<Frame> frames = ParseFrames(stream.OnEvent({Kind::kContentDelta, "Hi", -1, "", ""}));
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].data["choices"][0]["logprobs"], Json::parse(R"({"content": [
      {"token": "H", "logprob": -0.25, "bytes": [72], "top_logprobs":
          [{"token": "H", "logprob": -0.25, "bytes": [72]}]},
      {"token": "i", "logprob": -0.125, "bytes": [105], "top_logprobs": []}]})"));
}

TEST(ChatStreamTest, FailSendsAnErrorFrameThenDone) {
  ChatCompletionsStream stream(Request(ApiKind::kChatCompletions), "c", 1);
  std::vector<Frame> frames = ParseFrames(stream.Fail(UnavailableError("shutting down")));
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].data, Json::parse(R"({"error": {"message": "shutting down",
      "type": "server_error", "param": null, "code": "overloaded"}})"));
  EXPECT_TRUE(frames[1].data.is_null());
}

TEST(ChatBuilderTest, ToolCallsReasoningUsageTimings) {
  ChatRequest req = Request(ApiKind::kChatCompletions);
  text::ParsedOutput output = ScriptedOutput();
  output.content.clear();
  Json body = BuildChatCompletion(req, output, {}, ScriptedFinish(), "chatcmpl-9", 1234);
  Json expected = Json::parse(R"({"id": "chatcmpl-9", "object": "chat.completion",
      "created": 1234, "model": "qwen-test", "choices": [{"index": 0, "message": {
        "role": "assistant", "content": null, "reasoning_content": "Let me think.",
        "tool_calls": [
          {"id": "call_0", "type": "function",
           "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
          {"id": "call_1", "type": "function",
           "function": {"name": "get_time", "arguments": "{\"tz\":\"CET\"}"}}]},
        "logprobs": null, "finish_reason": "tool_calls"}],
      "usage": {"prompt_tokens": 100, "completion_tokens": 21, "total_tokens": 121,
                "prompt_tokens_details": {"cached_tokens": 60},
                "completion_tokens_details": {"reasoning_tokens": 4}}})");
  expected["timings"] = kTimings;
  EXPECT_EQ(body, expected);
}

TEST(ChatBuilderTest, PlainAnswerAndInvalidUtf8Piece) {
  ChatRequest req = Request(ApiKind::kChatCompletions);
  req.logprobs = true;
  text::ParsedOutput output{"", "ok", {}};
  // A byte-level token cut inside a character must not make the JSON text throw.
  std::vector<TokenInfo> tokens{{5, "\xe4\xbd", -1.0f, {}}};
  Json body = BuildChatCompletion(req, output, tokens, ScriptedFinish(), "c", 1);
  EXPECT_EQ(body["choices"][0]["message"],
            Json::parse(R"({"role": "assistant", "content": "ok"})"));
  EXPECT_EQ(body["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(body["choices"][0]["logprobs"]["content"][0]["bytes"], Json::parse("[228, 189]"));
  std::string text = DumpJson(body);
  EXPECT_NE(text.find("\xef\xbf\xbd"), std::string::npos);  // U+FFFD
}

TEST(CompletionsTest, BuilderWithEchoAndLogprobs) {
  ChatRequest req = Request(ApiKind::kCompletions);
  req.echo = true;
  req.prompt_text = "Once";
  req.logprobs = true;
  req.top_logprobs = 1;
  std::vector<TokenInfo> tokens{{1, " upon", -0.5f, {{" upon", -0.5f}, {" more", -1.5f}}},
                                {2, " a", -0.25f, {{" a", -0.25f}}}};
  FinishInfo finish = ScriptedFinish();
  finish.reason = FinishInfo::Reason::kLength;
  Json body = BuildCompletion(req, " upon a", tokens, finish, "cmpl-1", 7);
  EXPECT_EQ(body["object"], "text_completion");
  EXPECT_EQ(body["choices"][0]["text"], "Once upon a");
  EXPECT_EQ(body["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(body["choices"][0]["logprobs"], Json::parse(R"({"tokens": [" upon", " a"],
      "token_logprobs": [-0.5, -0.25], "top_logprobs": [{" upon": -0.5}, {" a": -0.25}],
      "text_offset": [4, 9]})"));
  EXPECT_EQ(body["usage"]["total_tokens"], 121);
  EXPECT_EQ(body["timings"], kTimings);
}

TEST(CompletionsTest, StreamChunksCarryTextAndOffsets) {
  ChatRequest req = Request(ApiKind::kCompletions);
  req.echo = true;
  req.prompt_text = "Once";
  req.logprobs = true;
  req.include_usage = true;
  CompletionsStream stream(req, "cmpl-2", 8);
  std::vector<std::string> raw = stream.Begin();
  stream.OnToken({1, " upon", -0.5f, {}});
  Append(&raw, stream.OnText(" upon"));
  Append(&raw, stream.OnText(""));
  Append(&raw, stream.Finish(ScriptedFinish()));
  std::vector<Frame> frames = ParseFrames(raw);
  ASSERT_EQ(frames.size(), 5u);
  EXPECT_EQ(frames[0].data, Json::parse(R"({"id": "cmpl-2", "object": "text_completion",
      "created": 8, "model": "qwen-test", "choices": [{"text": "Once", "index": 0,
      "logprobs": null, "finish_reason": null}]})"));
  EXPECT_EQ(frames[1].data["choices"][0]["text"], " upon");
  EXPECT_EQ(frames[1].data["choices"][0]["logprobs"]["text_offset"], Json::parse("[4]"));
  EXPECT_EQ(frames[2].data["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(frames[3].data["choices"], Json::array());
  EXPECT_EQ(frames[3].data["usage"]["prompt_tokens_details"]["cached_tokens"], 60);
  EXPECT_EQ(frames[3].data["timings"], kTimings);
  EXPECT_TRUE(frames[4].data.is_null());
}

TEST(AnthropicStreamTest, ScriptedSequence) {
  AnthropicStream stream(Request(ApiKind::kAnthropicMessages), "msg_1");
  std::vector<std::string> raw = stream.Begin(100, 60);
  for (const auto& event : ScriptedEvents()) Append(&raw, stream.OnEvent(event));
  Append(&raw, stream.Finish(ScriptedFinish()));
  std::vector<Frame> frames = ParseFrames(raw);
  std::vector<std::string> names;
  for (const Frame& f : frames) {
    names.push_back(f.event);
    EXPECT_EQ(f.data["type"], f.event);  // Anthropic repeats the event name as "type"
  }
  EXPECT_EQ(names, (std::vector<std::string>{
                       "message_start", "ping", "content_block_start", "content_block_delta",
                       "content_block_delta", "content_block_delta", "content_block_stop",
                       "content_block_start", "content_block_delta", "content_block_stop",
                       "content_block_start", "content_block_delta", "content_block_delta",
                       "content_block_stop", "content_block_start", "content_block_delta",
                       "content_block_stop", "message_delta", "message_stop"}));
  EXPECT_EQ(frames[0].data, Json::parse(R"({"type": "message_start", "message": {
      "id": "msg_1", "type": "message", "role": "assistant", "model": "qwen-test",
      "content": [], "stop_reason": null, "stop_sequence": null, "usage": {
        "input_tokens": 40, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 60,
        "output_tokens": 0}}})"));
  EXPECT_EQ(frames[2].data, Json::parse(R"({"type": "content_block_start", "index": 0,
      "content_block": {"type": "thinking", "thinking": "", "signature": ""}})"));
  EXPECT_EQ(frames[3].data, Json::parse(R"({"type": "content_block_delta", "index": 0,
      "delta": {"type": "thinking_delta", "thinking": "Let me "}})"));
  EXPECT_EQ(frames[5].data["delta"], Json::parse(R"({"type": "signature_delta",
      "signature": ""})"));
  EXPECT_EQ(frames[6].data, Json::parse(R"({"type": "content_block_stop", "index": 0})"));
  EXPECT_EQ(frames[7].data["content_block"], Json::parse(R"({"type": "text", "text": ""})"));
  EXPECT_EQ(frames[8].data, Json::parse(R"({"type": "content_block_delta", "index": 1,
      "delta": {"type": "text_delta", "text": "Hi"}})"));
  EXPECT_EQ(frames[10].data, Json::parse(R"({"type": "content_block_start", "index": 2,
      "content_block": {"type": "tool_use", "id": "call_0", "name": "get_weather",
                        "input": {}}})"));
  EXPECT_EQ(frames[11].data, Json::parse(R"({"type": "content_block_delta", "index": 2,
      "delta": {"type": "input_json_delta", "partial_json": "{\"city\":"}})"));
  EXPECT_EQ(frames[13].data["index"], 2);
  EXPECT_EQ(frames[14].data["index"], 3);
  EXPECT_EQ(frames[14].data["content_block"]["name"], "get_time");
  EXPECT_EQ(frames[15].data["delta"]["partial_json"], "{\"tz\":\"CET\"}");
  EXPECT_EQ(frames[16].data["index"], 3);
  Json expected_delta = Json::parse(R"({"type": "message_delta",
      "delta": {"stop_reason": "tool_use", "stop_sequence": null},
      "usage": {"input_tokens": 40, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 60, "output_tokens": 21}})");
  expected_delta["timings"] = kTimings;
  EXPECT_EQ(frames[17].data, expected_delta);
}

TEST(AnthropicStreamTest, OpenBlocksCloseAtFinishAndErrorsUseTheErrorEvent) {
  AnthropicStream stream(Request(ApiKind::kAnthropicMessages), "msg_2");
  std::vector<std::string> raw = stream.OnEvent({Kind::kContentDelta, "a", -1, "", ""});
  Append(&raw, stream.OnEvent({Kind::kContentDelta, "b", -1, "", ""}));
  FinishInfo finish = ScriptedFinish();
  finish.stop_sequence = "###";
  Append(&raw, stream.Finish(finish));
  std::vector<Frame> frames = ParseFrames(raw);
  ASSERT_EQ(frames.size(), 6u);  // start, 2 deltas, stop, message_delta, message_stop
  EXPECT_EQ(frames[3].event, "content_block_stop");
  EXPECT_EQ(frames[4].data["delta"], Json::parse(R"({"stop_reason": "stop_sequence",
      "stop_sequence": "###"})"));
  std::vector<Frame> error = ParseFrames(stream.Fail(ResourceExhaustedError("queue full")));
  ASSERT_EQ(error.size(), 1u);
  EXPECT_EQ(error[0].event, "error");
  EXPECT_EQ(error[0].data, Json::parse(R"({"type": "error", "error": {
      "type": "rate_limit_error", "message": "queue full"}})"));
}

TEST(AnthropicBuilderTest, BlocksAndStopReasons) {
  ChatRequest req = Request(ApiKind::kAnthropicMessages);
  Json body = BuildAnthropicMessage(req, ScriptedOutput(), ScriptedFinish(), "msg_3");
  Json expected = Json::parse(R"({"id": "msg_3", "type": "message", "role": "assistant",
      "model": "qwen-test", "content": [
        {"type": "thinking", "thinking": "Let me think.", "signature": ""},
        {"type": "text", "text": "Hi"},
        {"type": "tool_use", "id": "call_0", "name": "get_weather", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "call_1", "name": "get_time", "input": {"tz": "CET"}}],
      "stop_reason": "tool_use", "stop_sequence": null,
      "usage": {"input_tokens": 40, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 60, "output_tokens": 21}})");
  expected["timings"] = kTimings;
  EXPECT_EQ(body, expected);
  text::ParsedOutput plain{"", "Hi", {}};
  FinishInfo finish = ScriptedFinish();
  EXPECT_EQ(BuildAnthropicMessage(req, plain, finish, "m")["stop_reason"], "end_turn");
  finish.reason = FinishInfo::Reason::kLength;
  EXPECT_EQ(BuildAnthropicMessage(req, plain, finish, "m")["stop_reason"], "max_tokens");
  EXPECT_EQ(BuildCountTokens(42), Json::parse(R"({"input_tokens": 42})"));
}

std::vector<Frame> ScriptedResponsesFrames() {
  ChatRequest req = Request(ApiKind::kResponses);
  req.tool_namespaces["get_time"] = "clock";
  ResponsesStream stream(req, "resp_abc", 1700000000);
  std::vector<std::string> raw = stream.Begin();
  for (const auto& event : ScriptedEvents()) Append(&raw, stream.OnEvent(event));
  Append(&raw, stream.Finish(ScriptedFinish()));
  return ParseFrames(raw);
}

TEST(ResponsesStreamTest, ScriptedSequence) {
  std::vector<Frame> frames = ScriptedResponsesFrames();
  std::vector<std::string> names;
  for (size_t i = 0; i < frames.size(); ++i) {
    names.push_back(frames[i].event);
    EXPECT_EQ(frames[i].data["type"], frames[i].event);
    EXPECT_EQ(frames[i].data["sequence_number"], static_cast<int>(i));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"response.created",
                                             "response.in_progress",
                                             "response.output_item.added",
                                             "response.content_part.added",
                                             "response.reasoning_text.delta",
                                             "response.reasoning_text.delta",
                                             "response.reasoning_text.done",
                                             "response.content_part.done",
                                             "response.output_item.done",
                                             "response.output_item.added",
                                             "response.content_part.added",
                                             "response.output_text.delta",
                                             "response.output_text.done",
                                             "response.content_part.done",
                                             "response.output_item.done",
                                             "response.output_item.added",
                                             "response.function_call_arguments.delta",
                                             "response.function_call_arguments.delta",
                                             "response.function_call_arguments.done",
                                             "response.output_item.done",
                                             "response.output_item.added",
                                             "response.function_call_arguments.delta",
                                             "response.function_call_arguments.done",
                                             "response.output_item.done",
                                             "response.completed"}));
  EXPECT_EQ(frames[0].data["response"]["status"], "in_progress");
  EXPECT_EQ(frames[0].data["response"]["id"], "resp_abc");
  EXPECT_EQ(frames[2].data["item"], Json::parse(R"({"type": "reasoning", "id": "rs_abc_0",
      "summary": [], "content": []})"));
  EXPECT_EQ(frames[4].data, Json::parse(R"({"type": "response.reasoning_text.delta",
      "sequence_number": 4, "item_id": "rs_abc_0", "output_index": 0, "content_index": 0,
      "delta": "Let me "})"));
  EXPECT_EQ(frames[9].data["item"], Json::parse(R"({"type": "message", "id": "msg_abc_1",
      "status": "in_progress", "role": "assistant", "content": []})"));
  EXPECT_EQ(frames[10].data["part"], Json::parse(R"({"type": "output_text", "text": "",
      "annotations": [], "logprobs": []})"));
  EXPECT_EQ(frames[11].data, Json::parse(R"({"type": "response.output_text.delta",
      "sequence_number": 11, "item_id": "msg_abc_1", "output_index": 1, "content_index": 0,
      "delta": "Hi", "logprobs": []})"));
  EXPECT_EQ(frames[15].data["item"], Json::parse(R"({"type": "function_call",
      "id": "fc_abc_2", "call_id": "call_0", "name": "get_weather", "arguments": "",
      "status": "in_progress"})"));
  EXPECT_EQ(frames[16].data, Json::parse(R"({"type": "response.function_call_arguments.delta",
      "sequence_number": 16, "item_id": "fc_abc_2", "output_index": 2,
      "delta": "{\"city\":"})"));
  EXPECT_EQ(frames[18].data["arguments"], "{\"city\":\"Paris\"}");
  EXPECT_EQ(frames[19].data["item"]["status"], "completed");
  EXPECT_EQ(frames[20].data["item"]["namespace"], "clock");
}

TEST(ResponsesStreamTest, CompletedResponseHoldsAllItems) {
  std::vector<Frame> frames = ScriptedResponsesFrames();
  ASSERT_FALSE(frames.empty());
  const Json& response = frames.back().data["response"];
  EXPECT_EQ(response["status"], "completed");
  ASSERT_EQ(response["output"].size(), 4u);
  EXPECT_EQ(response["output"][0]["content"], Json::parse(R"([{"type": "reasoning_text",
      "text": "Let me think."}])"));
  EXPECT_EQ(response["output"][1]["content"][0]["text"], "Hi");
  EXPECT_EQ(response["output"][2]["arguments"], "{\"city\":\"Paris\"}");
  EXPECT_EQ(response["output"][3]["call_id"], "call_1");
  EXPECT_EQ(response["usage"], Json::parse(R"({"input_tokens": 100, "input_tokens_details":
      {"cached_tokens": 60}, "output_tokens": 21, "output_tokens_details":
      {"reasoning_tokens": 4}, "total_tokens": 121})"));
  EXPECT_EQ(response["timings"], kTimings);
}

TEST(ResponsesStreamTest, LengthLimitIsIncompleteAndFailIsFailed) {
  ResponsesStream stream(Request(ApiKind::kResponses), "resp_x", 1);
  std::vector<std::string> raw = stream.Begin();
  Append(&raw, stream.OnEvent({Kind::kContentDelta, "partial", -1, "", ""}));
  FinishInfo finish = ScriptedFinish();
  finish.reason = FinishInfo::Reason::kLength;
  Append(&raw, stream.Finish(finish));
  std::vector<Frame> frames = ParseFrames(raw);
  EXPECT_EQ(frames.back().event, "response.incomplete");
  const Json& response = frames.back().data["response"];
  EXPECT_EQ(response["status"], "incomplete");
  EXPECT_EQ(response["incomplete_details"], Json::parse(R"({"reason": "max_output_tokens"})"));
  EXPECT_EQ(response["output"][0]["status"], "incomplete");

  std::vector<Frame> failed = ParseFrames(stream.Fail(OutOfRangeError("prompt too long")));
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].event, "response.failed");
  EXPECT_EQ(failed[0].data["response"]["status"], "failed");
  EXPECT_EQ(failed[0].data["response"]["error"], Json::parse(R"({"code":
      "context_length_exceeded", "message": "prompt too long"})"));
}

TEST(ResponsesBuilderTest, Items) {
  ChatRequest req = Request(ApiKind::kResponses);
  req.tools = Json::parse(R"([{"type": "function", "function": {"name": "get_weather",
      "parameters": {"type": "object"}}}])");
  Json body = BuildResponse(req, ScriptedOutput(), {}, ScriptedFinish(), "resp_q", 5);
  EXPECT_EQ(body["object"], "response");
  EXPECT_EQ(body["status"], "completed");
  EXPECT_EQ(body["created_at"], 5);
  EXPECT_EQ(body["tools"], Json::parse(R"([{"type": "function", "name": "get_weather",
      "parameters": {"type": "object"}, "strict": false}])"));
  ASSERT_EQ(body["output"].size(), 4u);
  EXPECT_EQ(body["output"][0]["id"], "rs_q_0");
  EXPECT_EQ(body["output"][1], Json::parse(R"({"type": "message", "id": "msg_q_1",
      "status": "completed", "role": "assistant", "content": [{"type": "output_text",
      "text": "Hi", "annotations": [], "logprobs": []}]})"));
  EXPECT_EQ(body["output"][3], Json::parse(R"({"type": "function_call", "id": "fc_q_3",
      "call_id": "call_1", "name": "get_time", "arguments": "{\"tz\":\"CET\"}",
      "status": "completed"})"));
  EXPECT_EQ(body["usage"]["input_tokens_details"]["cached_tokens"], 60);
}

TEST(ErrorsTest, StatusMapsToEachApisShape) {
  struct Case {
    Status status;
    int openai_status;
    const char* openai_type;
    Json openai_code;
    int anthropic_status;
    const char* anthropic_type;
  };
  const Case cases[] = {
      {InvalidArgumentError("bad"), 400, "invalid_request_error", nullptr, 400,
       "invalid_request_error"},
      {OutOfRangeError("long"), 400, "invalid_request_error", "context_length_exceeded", 400,
       "invalid_request_error"},
      {NotFoundError("nf"), 404, "invalid_request_error", "not_found", 404, "not_found_error"},
      {UnimplementedError("no"), 501, "invalid_request_error", "unsupported", 501,
       "invalid_request_error"},
      {ResourceExhaustedError("full"), 429, "rate_limit_error", "rate_limit_exceeded", 429,
       "rate_limit_error"},
      {UnavailableError("busy"), 503, "server_error", "overloaded", 503, "overloaded_error"},
      {InternalError("oops"), 500, "server_error", "server_error", 500, "api_error"},
  };
  for (const Case& c : cases) {
    HttpError openai = ErrorResponse(ApiKind::kChatCompletions, c.status);
    EXPECT_EQ(openai.status, c.openai_status);
    EXPECT_EQ(openai.body, (Json{{"error",
                                  {{"message", c.status.message()},
                                   {"type", c.openai_type},
                                   {"param", nullptr},
                                   {"code", c.openai_code}}}}));
    HttpError anthropic = ErrorResponse(ApiKind::kAnthropicMessages, c.status);
    EXPECT_EQ(anthropic.status, c.anthropic_status);
    EXPECT_EQ(anthropic.body,
              (Json{{"type", "error"},
                    {"error", {{"type", c.anthropic_type}, {"message", c.status.message()}}}}));
  }
  EXPECT_EQ(ErrorResponse(ApiKind::kAnthropicCountTokens, InvalidArgumentError("x")).body["type"],
            "error");
  EXPECT_EQ(ErrorResponse(ApiKind::kResponses, InvalidArgumentError("x")).body["error"]["type"],
            "invalid_request_error");
  HttpError auth = AuthenticationError(ApiKind::kAnthropicMessages, "bad key");
  EXPECT_EQ(auth.status, 401);
  EXPECT_EQ(auth.body["error"]["type"], "authentication_error");
  EXPECT_EQ(AuthenticationError(ApiKind::kChatCompletions, "bad key").body["error"]["code"],
            "invalid_api_key");
}

TEST(ModelsTest, ListShapeForBothClients) {
  Json list = ModelsList("qwen3.5-4b", {"gpt-4o", "claude-opus-4-8"}, 0);
  EXPECT_EQ(list["object"], "list");
  EXPECT_EQ(list["has_more"], false);
  EXPECT_EQ(list["first_id"], "qwen3.5-4b");
  EXPECT_EQ(list["last_id"], "claude-opus-4-8");
  ASSERT_EQ(list["data"].size(), 3u);
  EXPECT_EQ(list["data"][0], Json::parse(R"({"id": "qwen3.5-4b", "object": "model",
      "created": 0, "owned_by": "deltaserve", "type": "model", "display_name": "qwen3.5-4b",
      "created_at": "1970-01-01T00:00:00Z"})"));
  EXPECT_EQ(list["data"][2]["id"], "claude-opus-4-8");
}

}  // namespace
}  // namespace ds::api
