// The HTTP server in-process over a scripted model: the exact output a test chooses (reasoning,
// tool calls, stop strings) flows through the real engine, output parser and API formatters, and
// comes back in each API's shapes, streamed and not.
#include <gtest/gtest.h>

#include "apps/server_fixture.h"

namespace ds::apps {
namespace {


using ServerTest = ServerFixture;

const json kTools = json::parse(R"([{"type": "function", "function": {"name": "read_file",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}])");

constexpr const char* kToolScript =
    "<think>\nlooking</think>\n\nLet me read it.\n<tool_call>\n{\"name\": \"read_file\", "
    "\"arguments\": {\"path\": \"a.txt\"}}\n</tool_call>";

// A shutdown signal can come at once after start-up: Stop() must end the listener then too
// (httplib's stop() does nothing to a listener not yet accepting, which then blocked for good).
TEST_F(ServerTest, StopRightAfterStartEndsTheListener) {
  server::ServerOptions options;
  options.port = 0;
  for (int i = 0; i < 200; ++i) {
    server::HttpServer http(options, service_.get());
    ASSERT_TRUE(http.Start().ok());
    http.Stop();
  }
}

TEST_F(ServerTest, ChatCompletionWithReasoningAndToolCall) {
  Start(kToolScript);
  json res = Post("/v1/chat/completions",
                  {{"model", "x"}, {"messages", {{{"role", "user"}, {"content", "read a.txt"}}}},
                   {"tools", kTools}});
  const json& message = res["choices"][0]["message"];
  EXPECT_EQ(message["reasoning_content"], "looking");
  EXPECT_EQ(message["content"], "Let me read it.");
  ASSERT_EQ(message["tool_calls"].size(), 1u);
  EXPECT_EQ(message["tool_calls"][0]["function"]["name"], "read_file");
  EXPECT_EQ(json::parse(message["tool_calls"][0]["function"]["arguments"].get<std::string>()),
            json({{"path", "a.txt"}}));
  EXPECT_EQ(res["choices"][0]["finish_reason"], "tool_calls");
}

TEST_F(ServerTest, StreamedToolCallArgumentsConcatenateToTheCall) {
  Start(kToolScript);
  auto events = PostStream(
      "/v1/chat/completions",
      {{"model", "x"}, {"messages", {{{"role", "user"}, {"content", "read"}}}}, {"tools", kTools}});
  std::string arguments, content, reasoning, name, finish;
  for (const auto& [event, data] : events) {
    if (data == "[DONE]") continue;
    for (const json& choice : data["choices"]) {
      const json& delta = choice["delta"];
      if (delta.contains("content") && delta["content"].is_string()) content += delta["content"];
      if (delta.contains("reasoning_content")) reasoning += delta["reasoning_content"];
      if (delta.contains("tool_calls")) {
        const json& call = delta["tool_calls"][0]["function"];
        if (call.contains("name")) name = call["name"];
        if (call.contains("arguments")) arguments += call["arguments"].get<std::string>();
      }
      if (choice["finish_reason"].is_string()) finish = choice["finish_reason"];
    }
  }
  EXPECT_EQ(events.back().second, "[DONE]");
  EXPECT_EQ(reasoning, "looking");
  EXPECT_EQ(content, "Let me read it.");
  EXPECT_EQ(name, "read_file");
  EXPECT_EQ(json::parse(arguments), json({{"path", "a.txt"}}));
  EXPECT_EQ(finish, "tool_calls");
}

TEST_F(ServerTest, ToolChoiceForcesACallOfTheNamedFunction) {
  // The prompt ends with the call's opening; the model only writes the arguments.
  Start("{\"path\": \"a.txt\"}}\n</tool_call>");
  const json named = {{"type", "function"}, {"function", {{"name", "read_file"}}}};
  json res = Post("/v1/chat/completions",
                  {{"model", "x"}, {"messages", {{{"role", "user"}, {"content", "go"}}}},
                   {"tools", kTools}, {"tool_choice", named}});
  const json& message = res["choices"][0]["message"];
  ASSERT_EQ(message["tool_calls"].size(), 1u) << res.dump();
  EXPECT_EQ(message["tool_calls"][0]["function"]["name"], "read_file");
  EXPECT_EQ(json::parse(message["tool_calls"][0]["function"]["arguments"].get<std::string>()),
            json({{"path", "a.txt"}}));
  EXPECT_EQ(res["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_EQ(res["usage"]["completion_tokens"], res["timings"]["decode_tokens"]);

  std::string name, arguments;
  for (const auto& [event, data] : PostStream(
           "/v1/chat/completions",
           {{"model", "x"}, {"messages", {{{"role", "user"}, {"content", "go"}}}},
            {"tools", kTools}, {"tool_choice", named}, {"stream", true}})) {
    if (data == "[DONE]") continue;
    for (const json& choice : data["choices"]) {
      if (!choice["delta"].contains("tool_calls")) continue;
      const json& call = choice["delta"]["tool_calls"][0]["function"];
      if (call.contains("name")) name = call["name"];
      if (call.contains("arguments")) arguments += call["arguments"].get<std::string>();
    }
  }
  EXPECT_EQ(name, "read_file");
  EXPECT_EQ(json::parse(arguments), json({{"path", "a.txt"}}));

  // Anthropic's {"type": "tool", "name": ...} forces the same call.
  json msg = Post("/v1/messages",
                  {{"model", "x"}, {"max_tokens", 50},
                   {"messages", {{{"role", "user"}, {"content", "go"}}}},
                   {"tools", {{{"name", "read_file"}, {"input_schema", {{"type", "object"}}}}}},
                   {"tool_choice", {{"type", "tool"}, {"name", "read_file"}}}});
  ASSERT_EQ(msg["content"].size(), 1u) << msg.dump();
  EXPECT_EQ(msg["content"][0]["type"], "tool_use");
  EXPECT_EQ(msg["content"][0]["input"], json({{"path", "a.txt"}}));
  EXPECT_EQ(msg["stop_reason"], "tool_use");
}

TEST_F(ServerTest, ToolChoiceRequiredForcesSomeCall) {
  Start("{\"name\": \"read_file\", \"arguments\": {\"path\": \"b\"}}\n</tool_call>");
  json res = Post("/v1/chat/completions",
                  {{"model", "x"}, {"messages", {{{"role", "user"}, {"content", "go"}}}},
                   {"tools", kTools}, {"tool_choice", "required"}});
  const json& message = res["choices"][0]["message"];
  ASSERT_EQ(message["tool_calls"].size(), 1u) << res.dump();
  EXPECT_EQ(message["tool_calls"][0]["function"]["name"], "read_file");
  EXPECT_EQ(res["choices"][0]["finish_reason"], "tool_calls");
}

TEST_F(ServerTest, ToolChoiceNoneLeavesCallMarkupAsContent) {
  Start("<tool_call>\n{\"name\": \"read_file\", \"arguments\": {}}\n</tool_call>");
  json res = Post("/v1/chat/completions",
                  {{"model", "x"}, {"messages", {{{"role", "user"}, {"content", "go"}}}},
                   {"tools", kTools}, {"tool_choice", "none"}});
  const json& message = res["choices"][0]["message"];
  EXPECT_FALSE(message.contains("tool_calls")) << res.dump();
  EXPECT_NE(message["content"].get<std::string>().find("<tool_call>"), std::string::npos);
  EXPECT_EQ(res["choices"][0]["finish_reason"], "stop");
}

TEST_F(ServerTest, ANamedToolChoiceMustNameADeclaredTool) {
  Start("x");
  json res = Post("/v1/chat/completions",
                  {{"model", "x"}, {"messages", {{{"role", "user"}, {"content", "go"}}}},
                   {"tools", kTools},
                   {"tool_choice", {{"type", "function"}, {"function", {{"name", "nope"}}}}}},
                  400);
  EXPECT_NE(res["error"]["message"].get<std::string>().find("'nope'"), std::string::npos);
}

TEST_F(ServerTest, ParallelCallsOffEndsTheReplyAfterTheFirstCall) {
  const std::string call =
      "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n</tool_call>";
  Start(call + "\n" + call);
  const json request = {{"model", "x"},
                        {"messages", {{{"role", "user"}, {"content", "go"}}}},
                        {"tools", kTools}};
  json both = Post("/v1/chat/completions", request);
  EXPECT_EQ(both["choices"][0]["message"]["tool_calls"].size(), 2u) << both.dump();
  json one = request;
  one["parallel_tool_calls"] = false;
  json res = Post("/v1/chat/completions", one);
  EXPECT_EQ(res["choices"][0]["message"]["tool_calls"].size(), 1u) << res.dump();
  EXPECT_EQ(res["choices"][0]["finish_reason"], "tool_calls");
}

TEST_F(ServerTest, AnthropicMessageHasThinkingTextAndToolUseBlocks) {
  Start(kToolScript);
  json res = Post("/v1/messages",
                  {{"model", "claude"}, {"max_tokens", 100},
                   {"messages", {{{"role", "user"}, {"content", "read a.txt"}}}},
                   {"tools", {{{"name", "read_file"},
                               {"input_schema", kTools[0]["function"]["parameters"]}}}}});
  ASSERT_EQ(res["content"].size(), 3u) << res.dump();
  EXPECT_EQ(res["content"][0]["type"], "thinking");
  EXPECT_EQ(res["content"][1]["type"], "text");
  EXPECT_EQ(res["content"][2]["type"], "tool_use");
  EXPECT_EQ(res["content"][2]["input"], json({{"path", "a.txt"}}));
  EXPECT_EQ(res["stop_reason"], "tool_use");

  auto events = PostStream("/v1/messages",
                           {{"model", "claude"}, {"max_tokens", 100},
                            {"messages", {{{"role", "user"}, {"content", "read"}}}}});
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front().first, "message_start");
  EXPECT_EQ(events.back().first, "message_stop");
}

TEST_F(ServerTest, StopStringsEndTheReplyAndAreNotReturned) {
  Start("Hello world. STOP and more text");
  json res = Post("/v1/chat/completions",
                  {{"model", "x"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}},
                   {"stop", {"STOP"}}});
  EXPECT_EQ(res["choices"][0]["message"]["content"], "Hello world. ");
  EXPECT_EQ(res["choices"][0]["finish_reason"], "stop");
}

TEST_F(ServerTest, IgnoreEosRunsTheReplyToMaxTokens) {
  Start("ok");
  json body = {{"model", "x"}, {"max_tokens", 12},
               {"messages", {{{"role", "user"}, {"content", "hi"}}}}};
  json stopped = Post("/v1/chat/completions", body);
  EXPECT_EQ(stopped["choices"][0]["finish_reason"], "stop");
  EXPECT_LT(stopped["usage"]["completion_tokens"], 12);
  body["ignore_eos"] = true;
  json full = Post("/v1/chat/completions", body);
  EXPECT_EQ(full["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(full["usage"]["completion_tokens"], 12);
}

// --max-tokens caps every reply; a request's own smaller limit wins.
TEST_F(ServerTest, TheServerCapOnOutputTokensHolds) {
  server::ChatServiceOptions chat;
  chat.max_output_tokens = 3;
  Start("one two three four five six seven", {}, "", chat);
  json body = {{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"ignore_eos", true}};
  EXPECT_EQ(Post("/v1/chat/completions", body)["usage"]["completion_tokens"], 3);
  body["max_tokens"] = 50;
  EXPECT_EQ(Post("/v1/chat/completions", body)["usage"]["completion_tokens"], 3);
  body["max_tokens"] = 2;
  EXPECT_EQ(Post("/v1/chat/completions", body)["usage"]["completion_tokens"], 2);
}

// The reasoning block's tokens are counted, also when the whole reply is reasoning; the
// Responses API echoes its instructions.
TEST_F(ServerTest, UsageCountsReasoningTokensAndResponsesEchoInstructions) {
  Start("<think>weighing the options here</think>done");
  json chat = Post("/v1/chat/completions",
                   {{"messages", {{{"role", "user"}, {"content", "hi"}}}}});
  const int64_t reasoning = chat["usage"]["completion_tokens_details"]["reasoning_tokens"];
  EXPECT_GT(reasoning, 2);
  EXPECT_LT(reasoning, chat["usage"]["completion_tokens"].get<int64_t>() - 1);
  json response = Post("/v1/responses", {{"input", "hi"}, {"instructions", "Be brief."}});
  EXPECT_EQ(response["instructions"], "Be brief.");
  EXPECT_EQ(response["usage"]["output_tokens_details"]["reasoning_tokens"], reasoning);
  json plain = Post("/v1/responses", {{"input", "hi"}});
  EXPECT_TRUE(plain["instructions"].is_null());
}

TEST_F(ServerTest, AReplyThatIsAllReasoningCountsItAll) {
  Start("<think>still thinking and never done");
  json chat = Post("/v1/chat/completions",
                   {{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"max_tokens", 6}});
  EXPECT_EQ(chat["usage"]["completion_tokens"], 6);
  // All but the opening tag, which comes before the block's first text.
  EXPECT_EQ(chat["usage"]["completion_tokens_details"]["reasoning_tokens"], 5);
}

TEST_F(ServerTest, BadRequestsGetTheirApiErrorShape) {
  Start("ok");
  auto bad_json = client_->Post("/v1/chat/completions", "{nope", "application/json");
  ASSERT_TRUE(bad_json);
  EXPECT_EQ(bad_json->status, 400);
  EXPECT_TRUE(json::parse(bad_json->body)["error"]["message"].is_string());
  json anthropic = Post("/v1/messages", {{"model", "m"}, {"messages", 5}}, 400);
  EXPECT_EQ(anthropic["type"], "error");
  EXPECT_TRUE(anthropic["error"]["message"].is_string());
}

// A prompt whose bytes alone exceed the context is refused before it is tokenised: 48 MB of
// text took 88 s of CPU to reject before.
TEST_F(ServerTest, APromptFarOverTheContextIsRefusedBeforeTokenising) {
  Start("ok");
  json body = {{"messages", {{{"role", "user"}, {"content", std::string(48 << 20, 'a')}}}}};
  const auto start = std::chrono::steady_clock::now();
  json error = Post("/v1/chat/completions", body, 400);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_NE(error["error"]["message"].get<std::string>().find("but the context size is"),
            std::string::npos)
      << error;
  EXPECT_EQ(error["error"]["code"], "context_length_exceeded");
}

// Each place a request carries free-form JSON, nested 40,000 levels deep (a 160 KB body): the
// walks over parsed values recurse per level, so without the bound each of these kills the
// process.
TEST_F(ServerTest, DeeplyNestedJsonIsRefusedWhereverItAppears) {
  Start("ok");
  const std::string deep = std::string(40000, '[') + std::string(40000, ']');
  const std::string messages = R"("messages":[{"role":"user","content":"hi"}])";
  const std::pair<std::string, std::string> bodies[] = {
      {"/v1/chat/completions", "{" + messages + R"(,"chat_template_kwargs":{"x":)" + deep + "}}"},
      {"/v1/chat/completions",
       "{" + messages + R"(,"tools":[{"type":"function","function":{"name":"f","parameters":)" +
           deep + "}}]}"},
      {"/v1/messages", R"({"model":"m","max_tokens":8,"messages":[{"role":"assistant","content":)"
                       R"([{"type":"tool_use","id":"t","name":"f","input":)" +
                           deep + "}]}]}"},
      {"/v1/messages/count_tokens", R"({"model":"m","messages":[{"role":"user","content":)" +
                                        deep + "}]}"},
  };
  for (const auto& [path, body] : bodies) {
    auto res = client_->Post(path, body, "application/json");
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 400) << path;
    EXPECT_NE(res->body.find("deeper than"), std::string::npos) << res->body;
  }
  // Arguments given as a JSON string are parsed later; too deep, they stay text.
  json call_body = {
      {"messages",
       {{{"role", "user"}, {"content", "hi"}},
        {{"role", "assistant"},
         {"tool_calls",
          {{{"id", "c"}, {"type", "function"},
            {"function", {{"name", "f"}, {"arguments", "{\"a\":" + deep + "}"}}}}}}},
        {{"role", "tool"}, {"tool_call_id", "c"}, {"content", "done"}}}}};
  Post("/v1/chat/completions", call_body);
  auto health = client_->Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

TEST_F(ServerTest, ApiKeyIsRequiredWhenConfigured) {
  server::ServerOptions options;
  options.api_key = "k";
  Start("ok", options);
  json body = {{"model", "x"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}};
  auto denied = client_->Post("/v1/chat/completions", body.dump(), "application/json");
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->status, 401);
  for (const char* scheme : {"Bearer", "bearer", "BEARER"}) {
    httplib::Headers headers = {{"Authorization", std::string(scheme) + " k"}};
    auto allowed =
        client_->Post("/v1/chat/completions", headers, body.dump(), "application/json");
    ASSERT_TRUE(allowed);
    EXPECT_EQ(allowed->status, 200) << scheme;
  }
  auto health = client_->Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

TEST_F(ServerTest, OversizedBodiesAndInvalidUtf8AreClearErrors) {
  server::ServerOptions options;
  options.max_body_bytes = 2000;
  Start("ok", options);
  json big = {{"model", "x"},
              {"messages", {{{"role", "user"}, {"content", std::string(5000, 'a')}}}}};
  auto res = client_->Post("/v1/chat/completions", big.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  EXPECT_TRUE(json::parse(res->body)["error"]["message"].is_string());
  std::string bad_utf8 =
      std::string(R"({"model": "x", "messages": [{"role": "user", "content": "a)") + "\xff\xfe" +
      R"("}]})";
  res = client_->Post("/v1/chat/completions", bad_utf8, "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->body.find("UTF-8"), std::string::npos) << res->body;
}

}  // namespace
}  // namespace ds::apps
