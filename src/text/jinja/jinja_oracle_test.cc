// Byte-for-byte conformance with python3-jinja2 (configured as Hugging Face configures it) on the
// real chat templates in testdata/templates, on the Qwen3 golden prompts, and on a corpus of
// small templates exercising the language. Skips when python3-jinja2 or the shared data is absent.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "text/jinja/jinja.h"
#include "text/jinja/oracle.h"

namespace ds::text::jinja {
namespace {

using nlohmann::ordered_json;
using testing::CompareWithOracle;
using testing::OracleJob;
using testing::OracleResult;
using testing::PythonJinjaAvailable;
using testing::RenderWithPython;

std::string SharedDir() {
  const char* env = std::getenv("DS_SHARED_DIR");
  return env != nullptr ? env : "../shared";
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

#define SKIP_WITHOUT_PYTHON_JINJA()                                                        \
  if (!PythonJinjaAvailable()) {                                                           \
    GTEST_SKIP() << "python3 with jinja2 is not available (python3 -c 'import jinja2')"; \
  }

ordered_json Msg(const char* role, ordered_json content) {
  return ordered_json{{"role", role}, {"content", std::move(content)}};
}

ordered_json ToolCall(const char* id, const char* name, ordered_json arguments) {
  return ordered_json{{"id", id},
                      {"type", "function"},
                      {"function", {{"name", name}, {"arguments", std::move(arguments)}}}};
}

ordered_json AssistantCalls(ordered_json content, std::vector<ordered_json> calls) {
  ordered_json m = Msg("assistant", std::move(content));
  m["tool_calls"] = calls;
  return m;
}

ordered_json ToolResult(const char* id, const char* content) {
  ordered_json m = Msg("tool", content);
  m["tool_call_id"] = id;
  return m;
}

ordered_json Tools() {
  return ordered_json::parse(R"([
    {"type": "function", "function": {"name": "get_weather",
      "description": "Get the weather for a city.\n  Returns °C. ",
      "parameters": {"type": "object",
        "properties": {
          "city": {"type": "string", "description": " City name, e.g. Zürich "},
          "unit": {"type": "string", "enum": ["c", "f"], "default": "c"},
          "days": {"type": ["integer", "null"], "minimum": 1, "maximum": 7.5}},
        "required": ["city"], "additionalProperties": false}}},
    {"type": "function", "function": {"name": "search",
      "description": "Search the web",
      "parameters": {"type": "object",
        "properties": {"query": {"type": "string"},
          "filters": {"type": "object", "properties": {"site": {"type": "string"}},
                      "nullable": true},
          "tags": {"type": "array", "items": {"type": "string"}}},
        "required": ["query", "filters"]}}}
  ])");
}

// Conversations covering what the templates branch on.
std::vector<ordered_json> Conversations() {
  const ordered_json dict_args = {{"city", "Paris"}, {"days", 3}, {"opts", {{"x", true}}}};
  const std::string string_args = R"({"query": "jinja \"templates\"", "tags": ["a", "b"]})";
  std::vector<ordered_json> c;
  c.push_back({Msg("system", "You are helpful."), Msg("user", "Hi")});
  c.push_back({Msg("user", "Hello")});
  c.push_back({Msg("user", "Hi"), Msg("assistant", "Hello! How can I help?"), Msg("user", "Bye")});
  ordered_json reasoning = Msg("assistant", "The answer is 4.");
  reasoning["reasoning_content"] = "2 + 2 = 4\n";
  c.push_back({Msg("user", "2+2?"), reasoning, Msg("user", "Thanks")});
  c.push_back({Msg("user", "2+2?"), reasoning});
  c.push_back({Msg("user", "Think"), Msg("assistant", "<think>\nhmm, let me see\n</think>\n\nIt is 4."),
               Msg("user", "ok")});
  c.push_back({Msg("user", "Weather?"),
               AssistantCalls("", {ToolCall("c1", "get_weather", dict_args)}),
               ToolResult("c1", "{\"temp\": 21}"), Msg("assistant", "It is 21 °C.")});
  c.push_back({Msg("system", "Use tools."), Msg("user", "Find jinja"),
               AssistantCalls("Let me search.", {ToolCall("c2", "search", string_args)}),
               ToolResult("c2", "3 results")});
  c.push_back({Msg("user", "Both"),
               AssistantCalls("", {ToolCall("a", "get_weather", {{"city", "Oslo"}}),
                                   ToolCall("b", "search", {{"query", "Oslo"}})}),
               ToolResult("a", "cold"), ToolResult("b", "fjords"), Msg("user", "Summarize")});
  c.push_back({Msg("user", "日本語で答えて 🙂 — ça va? \u202eRTL\u202c e\u0301"),
               Msg("assistant", "はい、元気です。\ttab\\back\"quote'")});
  c.push_back({Msg("user", ""), Msg("assistant", ""), Msg("user", "   ")});
  c.push_back({Msg("user", "What is <think>?"), Msg("assistant", "<think>open only")});
  c.push_back({Msg("user", "<tool_response>\nx\n</tool_response>")});
  c.push_back({Msg("user", "call"), AssistantCalls(nullptr, {ToolCall("n", "search", {{"q", 1}})})});
  c.push_back({Msg("system", ordered_json::array({{{"type", "text"}, {"text", "Parts system"}}})),
               Msg("user", ordered_json::array({{{"type", "text"}, {"text", "look"}},
                                                {{"type", "image"}, {"image", "x.png"}},
                                                {{"type", "text"}, {"text", "here"}}}))});
  c.push_back({Msg("assistant", "first"), Msg("system", "late system"), Msg("user", "u")});
  return c;
}

std::vector<ordered_json> ChatContexts() {
  std::vector<ordered_json> contexts;
  for (const ordered_json& messages : Conversations()) {
    for (int with_tools = 0; with_tools < 2; ++with_tools) {
      for (int gen = 0; gen < 2; ++gen) {
        for (int thinking = 0; thinking < 3; ++thinking) {
          ordered_json ctx;
          ctx["messages"] = messages;
          if (with_tools) ctx["tools"] = Tools();
          ctx["add_generation_prompt"] = gen == 1;
          if (thinking > 0) ctx["enable_thinking"] = thinking == 2;
          ctx["bos_token"] = "<|begin_of_text|>";
          ctx["eos_token"] = "<|eot_id|>";
          contexts.push_back(std::move(ctx));
        }
      }
    }
  }
  return contexts;
}

TEST(JinjaOracleTest, RealTemplatesMatchPythonJinja) {
  SKIP_WITHOUT_PYTHON_JINJA();
  const std::filesystem::path dir = SharedDir() + "/testdata/templates";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no templates at " << dir;
  std::vector<std::filesystem::path> paths;
  std::vector<OracleJob> jobs;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".jinja") continue;
    paths.push_back(entry.path());
    jobs.push_back({ReadFile(entry.path()), ChatContexts()});
  }
  EXPECT_GE(jobs.size(), 5u);
  const auto expected = RenderWithPython(jobs);
  ASSERT_TRUE(expected.has_value()) << "python oracle failed";
  for (size_t j = 0; j < jobs.size(); ++j) {
    ASSERT_TRUE(Template::Parse(jobs[j].source).ok()) << paths[j];
    int num_ok = 0;
    for (const OracleResult& r : (*expected)[j]) num_ok += r.ok;
    EXPECT_GT(num_ok, static_cast<int>(jobs[j].contexts.size()) / 2) << paths[j];
    EXPECT_EQ(CompareWithOracle(jobs[j].source, jobs[j].contexts, (*expected)[j]), "")
        << paths[j];
  }
}

TEST(JinjaOracleTest, ComparisonDetectsDifferences) {
  SKIP_WITHOUT_PYTHON_JINJA();
  const std::vector<ordered_json> contexts = {{{"x", 1}}, {{"x", "a"}}};
  auto results = RenderWithPython({{"{{ x }}", contexts}});
  ASSERT_TRUE(results.has_value());
  std::vector<OracleResult>* expected = &(*results)[0];
  EXPECT_EQ(CompareWithOracle("{{ x }}", contexts, *expected), "");
  (*expected)[1].output = "b";
  EXPECT_NE(CompareWithOracle("{{ x }}", contexts, *expected), "");
  (*expected)[1].ok = false;
  EXPECT_NE(CompareWithOracle("{{ x }}", contexts, *expected), "");
}

TEST(JinjaOracleTest, Qwen3GoldenPrompts) {
  const std::string dir = SharedDir() + "/testdata/tokenizers/qwen3";
  if (!std::filesystem::exists(dir + "/chat_template_golden.json")) {
    GTEST_SKIP() << "no golden prompts under " << dir;
  }
  const auto config = ordered_json::parse(ReadFile(dir + "/tokenizer_config.json"));
  const auto golden = ordered_json::parse(ReadFile(dir + "/chat_template_golden.json"));
  auto tmpl = Template::Parse(config["chat_template"].get<std::string>());
  ASSERT_TRUE(tmpl.ok()) << tmpl.status().ToString();
  ASSERT_FALSE(golden.empty());
  for (auto it = golden.begin(); it != golden.end(); ++it) {
    const ordered_json& c = it.value();
    ordered_json extra = ordered_json::object();
    if (c.contains("enable_thinking")) extra["enable_thinking"] = c["enable_thinking"];
    const ordered_json tools = c.contains("tools") ? c["tools"] : ordered_json();
    auto got = RenderChat(*tmpl, c["messages"], tools, true, extra);
    ASSERT_TRUE(got.ok()) << it.key() << ": " << got.status().ToString();
    EXPECT_EQ(*got, c["prompt"].get<std::string>()) << it.key();
  }
}

// Small templates over one context: every construct, filter, test and method, plus error cases.
TEST(JinjaOracleTest, LanguageCorpusMatchesPythonJinja) {
  SKIP_WITHOUT_PYTHON_JINJA();
  const ordered_json context = ordered_json::parse(R"({
    "s": "  Hello, World! héllo ", "n": 7, "f": 2.5, "neg": -3, "t": true, "nil": null,
    "l": [3, 1, 2], "words": ["b", "A", "c", "a"], "empty": [], "e": "",
    "d": {"b": 1, "a": [1, 2], "c": {"x": "y"}, "items": "shadowed"},
    "people": [{"name": "Ann", "age": 30, "tags": ["x"]}, {"name": "bob", "age": 25},
               {"name": "Cid", "age": 30, "tags": []}],
    "big": 12345678901234, "tiny": 1e-7, "huge": 1e22, "uni": "Grüße 日本 🙂"
  })");
  const char* corpus[] = {
#include "text/jinja/jinja_corpus.inc"
  };
  std::vector<OracleJob> jobs;
  for (const char* source : corpus) jobs.push_back({source, {context}});
  const auto expected = RenderWithPython(jobs);
  ASSERT_TRUE(expected.has_value()) << "python oracle failed";
  std::string failures;
  for (size_t j = 0; j < jobs.size(); ++j) {
    const std::string diff = CompareWithOracle(jobs[j].source, jobs[j].contexts, (*expected)[j]);
    if (!diff.empty()) failures += "template: " + jobs[j].source + "\n" + diff + "\n";
  }
  EXPECT_EQ(failures, "");
}

}  // namespace
}  // namespace ds::text::jinja
