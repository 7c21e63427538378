// Request parsing: every body captured from real clients parses; key facts of a few; field
// errors name the field exactly.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "api/anthropic_request.h"
#include "api/openai_request.h"

namespace ds::api {
namespace {

namespace fs = std::filesystem;

fs::path CapturesDir() {
  const char* shared = std::getenv("DS_SHARED_DIR");
  return fs::path(shared != nullptr ? shared : "../shared") / "testdata" / "captures";
}

Json ReadJson(const fs::path& path) {
  std::ifstream in(path);
  return Json::parse(in, nullptr, /*allow_exceptions=*/false);
}

// Parses a capture's body with the parser its URL routes to.
StatusOr<ChatRequest> ParseCapture(const Json& capture) {
  std::string url = capture["url"].get<std::string>();
  url = url.substr(0, url.find('?'));
  const Json& body = capture["body"];
  if (url == "/v1/messages") return ParseAnthropicMessagesRequest(body);
  if (url == "/v1/chat/completions") return ParseChatCompletionsRequest(body);
  if (url == "/v1/responses") return ParseResponsesRequest(body);
  return NotFoundError("no route for " + url);
}

StatusOr<ChatRequest> ParseCaptureFile(const std::string& relative) {
  Json capture = ReadJson(CapturesDir() / relative);
  if (capture.is_discarded()) return NotFoundError("cannot read " + relative);
  return ParseCapture(capture);
}

#define SKIP_WITHOUT_CAPTURES()                                                   \
  if (!fs::is_directory(CapturesDir())) {                                         \
    GTEST_SKIP() << "no captures at " << CapturesDir() << " (set DS_SHARED_DIR)"; \
  }

TEST(CapturesTest, EveryCapturedRequestParses) {
  SKIP_WITHOUT_CAPTURES();
  std::map<std::string, int> parsed_by_route;
  for (const auto& client : fs::directory_iterator(CapturesDir())) {
    if (!client.is_directory()) continue;
    for (const auto& file : fs::directory_iterator(client.path())) {
      Json capture = ReadJson(file.path());
      ASSERT_FALSE(capture.is_discarded()) << file.path();
      if (capture["method"] != "POST") continue;
      std::string url = capture["url"].get<std::string>();
      url = url.substr(0, url.find('?'));
      if (url != "/v1/messages" && url != "/v1/chat/completions" && url != "/v1/responses") {
        continue;
      }
      StatusOr<ChatRequest> req = ParseCapture(capture);
      ASSERT_TRUE(req.ok()) << file.path() << ": " << req.status().ToString();
      EXPECT_FALSE(req->messages.empty()) << file.path();
      ++parsed_by_route[url];
    }
  }
  EXPECT_GE(parsed_by_route["/v1/messages"], 10);
  EXPECT_GE(parsed_by_route["/v1/chat/completions"], 20);
  EXPECT_GE(parsed_by_route["/v1/responses"], 4);
}

TEST(CapturesTest, ClaudeCodeToolTurn) {
  SKIP_WITHOUT_CAPTURES();
  Json body = ReadJson(CapturesDir() / "claude-tool/003-POST-_v1_messages.json")["body"];
  StatusOr<ChatRequest> req = ParseAnthropicMessagesRequest(body);
  ASSERT_TRUE(req.ok()) << req.status().ToString();
  const Json& m = req->messages;
  // System blocks joined by "\n", the per-request billing header dropped by the default rule.
  ASSERT_EQ(m[0]["role"], "system");
  std::string system = m[0]["content"];
  EXPECT_EQ(system.rfind("You are a Claude agent", 0), 0u);
  EXPECT_EQ(system.find("x-anthropic-billing-header"), std::string::npos);
  // The user's two text blocks concatenated, then the mid-conversation system message in place.
  EXPECT_EQ(m[1]["role"], "user");
  std::string user = m[1]["content"];
  EXPECT_EQ(user.rfind("<system-reminder>", 0), 0u);
  EXPECT_NE(user.find("</system-reminder>\n\nWhat does main.py do?"), std::string::npos);
  EXPECT_EQ(m[2]["role"], "system");
  EXPECT_EQ(m[2]["content"], body["messages"][1]["content"]);
  // tool_use -> tool_calls with the input object; tool_result -> a tool message.
  ASSERT_EQ(m[3]["role"], "assistant");
  EXPECT_EQ(m[3]["content"], "");
  const Json& call = m[3]["tool_calls"][0];
  EXPECT_EQ(call["id"], "toolu_fake2");
  EXPECT_EQ(call["function"]["name"], "Read");
  EXPECT_EQ(call["function"]["arguments"], Json({{"file_path", "/home/user/demo/main.py"}}));
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[4], Json({{"role", "tool"},
                        {"tool_call_id", "toolu_fake2"},
                        {"content", "1\tdef f(x):\n2\t    return x**2\n3\t"},
                        {"name", "Read"}}));
  // Tools converted, schema key order kept.
  ASSERT_EQ(req->tools.size(), 24u);
  EXPECT_EQ(req->tools[0]["type"], "function");
  EXPECT_EQ(req->tools[0]["function"]["name"], "Agent");
  EXPECT_EQ(req->tools[0]["function"]["parameters"].dump(),
            body["tools"][0]["input_schema"].dump());
  EXPECT_EQ(req->template_kwargs["enable_thinking"], true);  // thinking: adaptive
  EXPECT_EQ(req->max_tokens, 64000);
  EXPECT_TRUE(req->stream);
  EXPECT_TRUE(req->add_generation_prompt);
  EXPECT_FALSE(req->continue_final_message);
}

TEST(CapturesTest, CodexFunctionCallRoundTrip) {
  SKIP_WITHOUT_CAPTURES();
  StatusOr<ChatRequest> req = ParseCaptureFile("codex-tool-a/002-POST-_v1_responses.json");
  ASSERT_TRUE(req.ok()) << req.status().ToString();
  const Json& m = req->messages;
  // Two developer messages merged into one system prompt.
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[0]["role"], "system");
  std::string system = m[0]["content"];
  EXPECT_EQ(system.rfind("You are a coding agent running in the Codex CLI", 0), 0u);
  EXPECT_NE(system.find("\n\n<skills_instructions>"), std::string::npos);
  EXPECT_NE(system.find("</skills_instructions><permissions instructions>"), std::string::npos);
  EXPECT_EQ(m[1]["role"], "user");
  EXPECT_EQ(m[2]["content"], "What does main.py do?");
  EXPECT_EQ(m[3]["role"], "assistant");
  EXPECT_EQ(m[3]["tool_calls"][0]["id"], "call_fake1");
  EXPECT_EQ(m[3]["tool_calls"][0]["function"]["arguments"], Json({{"cmd", "cat main.py"}}));
  EXPECT_EQ(m[4]["role"], "tool");
  EXPECT_EQ(m[4]["tool_call_id"], "call_fake1");
  EXPECT_EQ(m[4]["name"], "exec_command");
  // Flat function tools plus the namespace's functions; web_search ignored.
  ASSERT_TRUE(req->tools.is_array());
  EXPECT_EQ(req->tools[0]["function"]["name"], "exec_command");
  EXPECT_EQ(req->tool_namespaces.at("close_agent"), "multi_agent_v1");
  for (const Json& tool : req->tools) EXPECT_EQ(tool["type"], "function");
  EXPECT_EQ(req->tool_choice.mode, ToolChoice::Mode::kAuto);
  EXPECT_TRUE(req->stream);
}

TEST(CapturesTest, OpencodeAndPiToolTurns) {
  SKIP_WITHOUT_CAPTURES();
  StatusOr<ChatRequest> opencode =
      ParseCaptureFile("opencode-tool-a/003-POST-_v1_chat_completions.json");
  ASSERT_TRUE(opencode.ok()) << opencode.status().ToString();
  const Json& m = opencode->messages;
  EXPECT_EQ(m[2]["tool_calls"][0]["function"]["arguments"],
            Json({{"filePath", "/home/user/demo/main.py"}}));
  EXPECT_EQ(m[3]["role"], "tool");
  EXPECT_EQ(m[3]["name"], "read");
  EXPECT_TRUE(opencode->include_usage);
  EXPECT_EQ(opencode->max_tokens, 8192);
  EXPECT_EQ(opencode->tools.size(), 10u);

  StatusOr<ChatRequest> pi = ParseCaptureFile("pi-tool-a/002-POST-_v1_chat_completions.json");
  ASSERT_TRUE(pi.ok()) << pi.status().ToString();
  EXPECT_EQ(pi->max_tokens, 16384);                                // max_completion_tokens
  EXPECT_EQ(pi->messages[1]["content"], "What does main.py do?");  // text parts flattened
  EXPECT_EQ(pi->messages[2]["content"], "");                       // null content beside tool_calls
  EXPECT_EQ(pi->messages[2]["tool_calls"][0]["function"]["arguments"], Json({{"path", "main.py"}}));
}

TEST(CapturesTest, SdkSmokeAnthropicDefaultsToNoThinking) {
  SKIP_WITHOUT_CAPTURES();
  StatusOr<ChatRequest> req = ParseCaptureFile("sdk_smoke/005-POST-_v1_messages.json");
  ASSERT_TRUE(req.ok()) << req.status().ToString();
  EXPECT_EQ(req->template_kwargs["enable_thinking"], false);
  EXPECT_EQ(req->max_tokens, 16);
  EXPECT_EQ(req->messages, Json::array({{{"role", "user"}, {"content", "hi"}}}));
  StatusOr<ChatRequest> responses = ParseCaptureFile("sdk_smoke/003-POST-_v1_responses.json");
  ASSERT_TRUE(responses.ok());
  EXPECT_EQ(responses->messages, Json::array({{{"role", "user"}, {"content", "hi"}}}));
}

// Field errors: status code and exact message.
struct ErrorCase {
  ApiKind api;
  const char* body;
  StatusCode code;
  const char* message;
};

StatusOr<ChatRequest> Parse(ApiKind api, const Json& body) {
  switch (api) {
    case ApiKind::kChatCompletions:
      return ParseChatCompletionsRequest(body);
    case ApiKind::kCompletions:
      return ParseCompletionsRequest(body);
    case ApiKind::kResponses:
      return ParseResponsesRequest(body);
    case ApiKind::kAnthropicMessages:
      return ParseAnthropicMessagesRequest(body);
    case ApiKind::kAnthropicCountTokens:
      return ParseAnthropicCountTokensRequest(body);
  }
  return InternalError("unreachable");
}

void CollectPointers(const Json& value, const Json::json_pointer& at,
                     std::vector<Json::json_pointer>* out) {
  out->push_back(at);
  if (value.is_object()) {
    for (const auto& [key, child] : value.items()) CollectPointers(child, at / key, out);
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) CollectPointers(value[i], at / i, out);
  }
}

// Wrong types anywhere in real bodies give a Status from every parser, never an exception.
TEST(CapturesTest, MutatedBodiesNeverThrow) {
  SKIP_WITHOUT_CAPTURES();
  const Json replacements[] = {Json(),
                               Json(7),
                               Json(-1.5),
                               Json("x"),
                               Json(true),
                               Json::array({1, "a"}),
                               Json::object({{"type", "text"}})};
  std::mt19937 rng(1234);
  int num_errors = 0;
  for (const char* file :
       {"claude-tool/003-POST-_v1_messages.json", "codex-tool-a/002-POST-_v1_responses.json",
        "opencode-tool-a/003-POST-_v1_chat_completions.json"}) {
    Json body = ReadJson(CapturesDir() / file)["body"];
    std::vector<Json::json_pointer> pointers;
    CollectPointers(body, Json::json_pointer(), &pointers);
    for (int trial = 0; trial < 300; ++trial) {
      Json mutated = body;
      mutated[pointers[rng() % pointers.size()]] = replacements[rng() % std::size(replacements)];
      for (int api = 0; api <= static_cast<int>(ApiKind::kAnthropicCountTokens); ++api) {
        StatusOr<ChatRequest> req = InternalError("not run");
        EXPECT_NO_THROW(req = Parse(static_cast<ApiKind>(api), mutated)) << file;
        num_errors += !req.ok();
      }
    }
  }
  EXPECT_GT(num_errors, 0);
}

constexpr auto kChat = ApiKind::kChatCompletions;
constexpr auto kAnthropic = ApiKind::kAnthropicMessages;
constexpr auto kInvalid = StatusCode::kInvalidArgument;

const ErrorCase kErrorCases[] = {
    {kChat, R"([1, 2])", kInvalid, "the request body must be a JSON object"},
    {kChat, R"({"model": "m"})", kInvalid, "messages is required"},
    {kChat, R"({"messages": []})", kInvalid, "messages must not be empty"},
    {kChat, R"({"messages": "hi"})", kInvalid, "messages must be an array"},
    {kChat, R"({"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": 5}]})",
     kInvalid, "messages[1].content must be a string or an array of content parts"},
    {kChat, R"({"messages": [{"role": "wizard", "content": "a"}]})", kInvalid,
     "messages[0].role must be one of system, developer, user, assistant, tool"},
    {kChat, R"({"messages": [{"content": "a"}]})", kInvalid, "messages[0].role is required"},
    {kChat,
     R"({"messages": [{"role": "user", "content": [{"type": "text", "text": "a"},
         {"type": "image_url", "image_url": {"url": "x"}}]}]})",
     kInvalid, "messages[0].content[1] is an image; the loaded model reads text only"},
    {kChat, R"({"messages": [{"role": "user", "content": [{"type": "audio"}]}]})", kInvalid,
     "messages[0].content[0].type \"audio\" is not supported here"},
    {kChat, R"({"messages": [{"role": "user", "content": "a"}, {"role": "tool", "content": "r"}]})",
     kInvalid, "messages[1].tool_call_id is required"},
    {kChat, R"({"messages": [{"role": "assistant", "tool_calls": [{"id": "c", "function": {}}]}]})",
     kInvalid, "messages[0].tool_calls[0].function.name is required"},
    {kChat, R"({"messages": [{"role": "user", "content": "a"}], "temperature": "hot"})", kInvalid,
     "temperature must be a number"},
    {kChat, R"({"messages": [{"role": "user", "content": "a"}], "top_p": 2})", kInvalid,
     "top_p must be between 0 and 1"},
    {kChat, R"({"messages": [{"role": "user", "content": "a"}], "max_tokens": 1.5})", kInvalid,
     "max_tokens must be an integer"},
    {kChat, R"({"messages": [{"role": "user", "content": "a"}], "max_tokens": 0})", kInvalid,
     "max_tokens must be >= 1"},
    {kChat, R"({"messages": [{"role": "user", "content": "a"}], "stop": ["x", 3]})", kInvalid,
     "stop[1] must be a string"},
    {kChat, R"({"messages": [{"role": "user", "content": "a"}], "logit_bias": {"abc": 1}})",
     kInvalid, "logit_bias keys must be token ids, got \"abc\""},
    {kChat, R"({"messages": [{"role": "user", "content": "a"}], "logit_bias": {"5": 200}})",
     kInvalid, "logit_bias.5 must be between -100 and 100"},
    {kChat, R"({"messages": [{"role": "user", "content": "a"}], "tools": [{"type": "function",
         "function": {"description": "d"}}]})",
     kInvalid, "tools[0].function.name is required"},
    {kChat, R"({"messages": [{"role": "user", "content": "a"}], "tool_choice": "sometimes"})",
     kInvalid, "tool_choice must be \"auto\", \"none\", \"required\" or a function"},
    {kChat, R"({"messages": [{"role": "user", "content": "a"}], "n": 2})",
     kInvalid, "n must be 1: one choice per request is supported"},
    {ApiKind::kCompletions, R"({"prompt": "a", "suffix": "b"})", kInvalid,
     "suffix (fill-in-the-middle) is not supported"},
    {kChat, R"({"messages": [{"role": "user", "content": "a"}], "stream": "yes"})", kInvalid,
     "stream must be a boolean"},
    {kChat, R"({"messages": [{"role": "user", "content": "a"}], "top_logprobs": 21})", kInvalid,
     "top_logprobs must be between 0 and 20"},
    {kChat,
     R"({"messages": [{"role": "user", "content": "a"}],
         "response_format": {"type": "json_schema"}})",
     StatusCode::kUnimplemented, "response_format \"json_schema\" is not supported"},
    {ApiKind::kCompletions, R"({"model": "m"})", kInvalid, "prompt is required"},
    {ApiKind::kCompletions, R"({"prompt": ["a", "b"]})", kInvalid,
     "prompt must be a string or an array of token ids (one prompt per request); prompt[0] is "
     "not a token id"},
    {ApiKind::kCompletions, R"({"prompt": 7})", kInvalid,
     "prompt must be a string or an array of token ids"},
    {ApiKind::kCompletions, R"({"prompt": "a", "logprobs": 6})", kInvalid,
     "logprobs must be between 0 and 5"},
    {ApiKind::kResponses, R"({"model": "m"})", kInvalid, "input is required"},
    {ApiKind::kResponses, R"({"input": 3})", kInvalid,
     "input must be a string or an array of input items"},
    {ApiKind::kResponses, R"({"input": [{"type": "computer_call"}]})", kInvalid,
     "input[0].type \"computer_call\" is not supported here"},
    {ApiKind::kResponses, R"({"input": [{"type": "function_call", "name": "f"}]})", kInvalid,
     "input[0].call_id is required"},
    {ApiKind::kResponses, R"({"input": "hi", "previous_response_id": "resp_1"})",
     StatusCode::kUnimplemented,
     "previous_response_id is not supported: responses are not stored, send the whole "
     "conversation in input"},
    {ApiKind::kResponses, R"({"input": "hi", "tools": [{"type": "function"}]})", kInvalid,
     "tools[0].name is required"},
    {kAnthropic, R"({"messages": [{"role": "user", "content": "hi"}]})", kInvalid,
     "max_tokens is required"},
    {kAnthropic, R"({"max_tokens": 5, "messages": [{"role": "user", "content": 5}]})", kInvalid,
     "messages[0].content must be a string or an array of content blocks"},
    {kAnthropic, R"({"max_tokens": 5, "messages": [{"role": "user"}]})", kInvalid,
     "messages[0].content is required"},
    {kAnthropic,
     R"({"max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "image",
         "source": {}}]}]})",
     kInvalid, "messages[0].content[0] is an image; the loaded model reads text only"},
    {kAnthropic,
     R"({"max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "tool_result",
         "tool_use_id": "t", "content": 4}]}]})",
     kInvalid, "messages[0].content[0].content must be a string or an array of content blocks"},
    {kAnthropic,
     R"({"max_tokens": 5, "messages": [{"role": "assistant", "content": [{"type": "tool_use",
         "id": "t", "name": "f", "input": "x"}]}]})",
     kInvalid, "messages[0].content[0].input must be an object"},
    {kAnthropic,
     R"({"max_tokens": 5, "system": 5, "messages": [{"role": "user", "content": "a"}]})", kInvalid,
     "system must be a string or an array of text blocks"},
    {kAnthropic,
     R"({"max_tokens": 5, "temperature": 1.5, "messages": [{"role": "user", "content": "a"}]})",
     kInvalid, "temperature must be between 0 and 1"},
    {kAnthropic,
     R"({"max_tokens": 5, "tools": [{"name": "f"}],
         "messages": [{"role": "user", "content": "a"}]})",
     kInvalid, "tools[0].input_schema is required"},
    {kAnthropic,
     R"({"max_tokens": 5, "thinking": {"type": "sometimes"},
         "messages": [{"role": "user", "content": "a"}]})",
     kInvalid, "thinking.type must be one of enabled, adaptive, disabled"},
    {kAnthropic,
     R"({"max_tokens": 5, "tool_choice": {"type": "tool"},
         "messages": [{"role": "user", "content": "a"}]})",
     kInvalid, "tool_choice.name is required"},
    {ApiKind::kAnthropicCountTokens, R"({"messages": [{"role": "robot", "content": "a"}]})",
     kInvalid, "messages[0].role must be \"user\" or \"assistant\""},
};

TEST(RequestErrorsTest, FieldErrorsNameTheField) {
  for (const ErrorCase& c : kErrorCases) {
    Json body = Json::parse(c.body);
    StatusOr<ChatRequest> req = Parse(c.api, body);
    ASSERT_FALSE(req.ok()) << c.body;
    EXPECT_EQ(req.status().code(), c.code) << c.body;
    EXPECT_EQ(req.status().message(), c.message) << c.body;
  }
}

TEST(ChatRequestTest, SamplingFieldsAndDefaults) {
  engine::SamplingParams defaults;
  defaults.temperature = 0.6f;
  defaults.top_k = 20;
  Json body = Json::parse(R"({"messages": [{"role": "user", "content": "a"}],
      "top_p": 0.5, "seed": 42, "presence_penalty": 1.5, "frequency_penalty": -0.5,
      "logit_bias": {"7": -100, "12": 3.5}, "stop": "END", "logprobs": true,
      "top_logprobs": 3, "max_completion_tokens": 99, "chat_template_kwargs":
      {"enable_thinking": false}, "repetition_penalty": 1.1, "ignore_eos": true})");
  StatusOr<ChatRequest> req = ParseChatCompletionsRequest(body, defaults);
  ASSERT_TRUE(req.ok()) << req.status().ToString();
  EXPECT_FLOAT_EQ(req->sampling.temperature, 0.6f);  // unset: the default
  EXPECT_EQ(req->sampling.top_k, 20);
  EXPECT_FLOAT_EQ(req->sampling.top_p, 0.5f);
  EXPECT_EQ(req->sampling.seed, 42u);
  EXPECT_FLOAT_EQ(req->sampling.presence_penalty, 1.5f);
  EXPECT_FLOAT_EQ(req->sampling.frequency_penalty, -0.5f);
  EXPECT_FLOAT_EQ(req->sampling.repeat_penalty, 1.1f);
  ASSERT_EQ(req->sampling.logit_bias.size(), 2u);
  EXPECT_EQ(req->sampling.logit_bias[0], (std::pair<int32_t, float>(7, -100.0f)));
  EXPECT_EQ(req->sampling.logit_bias[1], (std::pair<int32_t, float>(12, 3.5f)));
  EXPECT_EQ(req->stop, std::vector<std::string>{"END"});
  EXPECT_TRUE(req->logprobs);
  EXPECT_EQ(req->top_logprobs, 3);
  EXPECT_EQ(req->max_tokens, 99);
  EXPECT_EQ(req->template_kwargs, Json({{"enable_thinking", false}}));
  EXPECT_EQ(req->tools, Json());
  EXPECT_TRUE(req->ignore_eos);
  EXPECT_FALSE(ParseChatCompletionsRequest(Json::parse(R"({"messages": [{"role": "user", "content": "a"}],
                                                       "ignore_eos": 1})"),
                                           defaults).ok());
}

TEST(ChatRequestTest, ToolChoiceForms) {
  Json body = Json::parse(R"({"messages": [{"role": "user", "content": "a"}],
      "tool_choice": {"type": "function", "function": {"name": "f"}}})");
  StatusOr<ChatRequest> req = ParseChatCompletionsRequest(body);
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->tool_choice.mode, ToolChoice::Mode::kFunction);
  EXPECT_EQ(req->tool_choice.function_name, "f");
  body["tool_choice"] = "required";
  EXPECT_EQ(ParseChatCompletionsRequest(body)->tool_choice.mode, ToolChoice::Mode::kRequired);
  body["tool_choice"] = "none";
  EXPECT_EQ(ParseChatCompletionsRequest(body)->tool_choice.mode, ToolChoice::Mode::kNone);
}

TEST(ChatRequestTest, ArgumentsThatAreNotAnObjectStayText) {
  Json body = Json::parse(R"({"messages": [{"role": "assistant", "content": "",
      "reasoning_content": "hmm", "tool_calls": [{"id": "c1", "type": "function",
      "function": {"name": "f", "arguments": "{\"b\": 1, \"a\": 2}"}}, {"id": "c2",
      "type": "function", "function": {"name": "g", "arguments": "not json"}}]}]})");
  StatusOr<ChatRequest> req = ParseChatCompletionsRequest(body);
  ASSERT_TRUE(req.ok()) << req.status().ToString();
  const Json& calls = req->messages[0]["tool_calls"];
  EXPECT_EQ(calls[0]["function"]["arguments"].dump(), R"({"b":1,"a":2})");  // order kept
  EXPECT_EQ(calls[1]["function"]["arguments"], "not json");
  EXPECT_EQ(req->messages[0]["reasoning_content"], "hmm");
}

TEST(CompletionsRequestTest, PromptForms) {
  StatusOr<ChatRequest> text = ParseCompletionsRequest(
      Json::parse(R"({"prompt": "Once", "echo": true, "logprobs": 2, "max_tokens": 0})"));
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(text->prompt_text, "Once");
  EXPECT_FALSE(text->prompt_is_ids);
  EXPECT_TRUE(text->echo);
  EXPECT_TRUE(text->logprobs);
  EXPECT_EQ(text->top_logprobs, 2);
  EXPECT_EQ(text->max_tokens, 0);
  StatusOr<ChatRequest> ids = ParseCompletionsRequest(Json::parse(R"({"prompt": [[1, 2, 3]]})"));
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  EXPECT_TRUE(ids->prompt_is_ids);
  EXPECT_EQ(ids->prompt_ids, (std::vector<int32_t>{1, 2, 3}));
  StatusOr<ChatRequest> flat = ParseCompletionsRequest(Json::parse(R"({"prompt": [4, 5]})"));
  ASSERT_TRUE(flat.ok());
  EXPECT_EQ(flat->prompt_ids, (std::vector<int32_t>{4, 5}));
}

TEST(ResponsesRequestTest, ReasoningItemsOpenTheAssistantTurn) {
  Json body = Json::parse(R"({"instructions": "Be brief.", "input": [
      {"role": "user", "content": "q"},
      {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "t"}]},
      {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "a"}]},
      {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
      {"type": "function_call_output", "call_id": "c1",
       "output": [{"type": "input_text", "text": "out"}]}],
      "max_output_tokens": 50, "reasoning": {"effort": "none"}})");
  StatusOr<ChatRequest> req = ParseResponsesRequest(body);
  ASSERT_TRUE(req.ok()) << req.status().ToString();
  Json expected = Json::parse(R"([
      {"role": "system", "content": "Be brief."},
      {"role": "user", "content": "q"},
      {"role": "assistant", "content": "a", "reasoning_content": "t", "tool_calls": [
          {"id": "c1", "type": "function", "function": {"name": "f", "arguments": {}}}]},
      {"role": "tool", "tool_call_id": "c1", "content": "out", "name": "f"}])");
  EXPECT_EQ(req->messages, expected);
  EXPECT_EQ(req->max_tokens, 50);
  EXPECT_EQ(req->template_kwargs["enable_thinking"], false);
}

TEST(AnthropicRequestTest, BlocksToolResultsAndPrefill) {
  Json body = Json::parse(R"({"max_tokens": 100, "system": "S", "stop_sequences": ["###"],
      "tool_choice": {"type": "any", "disable_parallel_tool_use": true},
      "thinking": {"type": "disabled"},
      "tools": [{"name": "f", "description": "d", "input_schema": {"type": "object"}},
                {"type": "web_search_20250305", "name": "web_search"}],
      "messages": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s"},
           {"type": "redacted_thinking", "data": "x"}, {"type": "text", "text": "calling"},
           {"type": "tool_use", "id": "tu1", "name": "f", "input": {"z": 1, "a": 2}}]},
        {"role": "user", "content": [
           {"type": "tool_result", "tool_use_id": "tu1", "is_error": true,
            "content": [{"type": "text", "text": "r1"}, {"type": "text", "text": "r2"}]},
           {"type": "text", "text": "go on"}]},
        {"role": "assistant", "content": "Sure,"}]})");
  StatusOr<ChatRequest> req = ParseAnthropicMessagesRequest(body);
  ASSERT_TRUE(req.ok()) << req.status().ToString();
  Json expected = Json::parse(R"([
      {"role": "system", "content": "S"},
      {"role": "user", "content": "q"},
      {"role": "assistant", "content": "calling", "reasoning_content": "t", "tool_calls": [
          {"id": "tu1", "type": "function", "function": {"name": "f",
           "arguments": {"z": 1, "a": 2}}}]},
      {"role": "tool", "tool_call_id": "tu1", "content": "r1r2", "name": "f"},
      {"role": "user", "content": "go on"},
      {"role": "assistant", "content": "Sure,"}])");
  EXPECT_EQ(req->messages, expected);
  EXPECT_EQ(req->tools, Json::parse(R"([{"type": "function", "function": {"name": "f",
      "description": "d", "parameters": {"type": "object"}}}])"));
  EXPECT_EQ(req->tool_choice.mode, ToolChoice::Mode::kRequired);
  EXPECT_FALSE(req->parallel_tool_calls);
  EXPECT_EQ(req->template_kwargs["enable_thinking"], false);
  EXPECT_EQ(req->stop, std::vector<std::string>{"###"});
  EXPECT_TRUE(req->continue_final_message);
  EXPECT_FALSE(req->add_generation_prompt);
}

TEST(AnthropicRequestTest, CountTokensNeedsNoMaxTokens) {
  StatusOr<ChatRequest> req = ParseAnthropicCountTokensRequest(
      Json::parse(R"({"model": "m", "messages": [{"role": "user", "content": "hi"}]})"));
  ASSERT_TRUE(req.ok()) << req.status().ToString();
  EXPECT_EQ(req->api, ApiKind::kAnthropicCountTokens);
}

TEST(AnthropicRequestTest, VolatileSystemBlocksAreDroppedByRule) {
  Json body = Json::parse(R"({"max_tokens": 5, "messages": [{"role": "user", "content": "q"}],
      "system": [{"type": "text", "text": "x-anthropic-billing-header: cc_version=1; cch=ab12;"},
                 {"type": "text", "text": "You are helpful."},
                 {"type": "text", "text": "Be brief."}]})");
  StatusOr<ChatRequest> req = ParseAnthropicMessagesRequest(body);
  ASSERT_TRUE(req.ok()) << req.status().ToString();
  EXPECT_EQ(req->messages[0], Json::parse(R"({"role": "system",
      "content": "You are helpful.\nBe brief."})"));

  AnthropicParseOptions keep_all;
  keep_all.volatile_system_prefixes.clear();
  req = ParseAnthropicMessagesRequest(body, keep_all);
  ASSERT_TRUE(req.ok());
  EXPECT_TRUE(req->messages[0]["content"].get<std::string>().starts_with("x-anthropic-billing"));

  AnthropicParseOptions custom;
  custom.volatile_system_prefixes = {"You are", "Be "};
  req = ParseAnthropicCountTokensRequest(body, custom);
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->messages[0]["content"], "x-anthropic-billing-header: cc_version=1; cch=ab12;");

  // Nothing left: no system message rather than an empty one.
  body["system"] = Json::parse(R"([{"type": "text", "text": "x-anthropic-billing-header: a"}])");
  req = ParseAnthropicMessagesRequest(body);
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->messages, Json::parse(R"([{"role": "user", "content": "q"}])"));
}

}  // namespace
}  // namespace ds::api
