// OutputParser against the real Qwen chat templates: assistant turns (the tool calls captured from
// real clients, and richer ones on the same tools) are rendered by Jinja2 with the Qwen3.5 (XML
// calls) and Qwen3 (JSON calls) templates; parsing the rendered turn, split every way, must give
// back the message. Skips without DS_SHARED_DIR or python3-jinja2.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "text/output/output_parser.h"
#include "text/output/output_parser_test_util.h"

namespace ds::text {
namespace {

using Json = nlohmann::json;

std::string SharedDir() {
  const char* env = std::getenv("DS_SHARED_DIR");
  return env != nullptr ? env : "../shared";
}

// Runs the oracle; returns its stdout. *ok tells whether it ran and exited 0.
std::string RunOracle(const std::string& shared, bool* ok) {
  const std::string command = std::string("python3 ") + DS_OUTPUT_ORACLE + " '" + shared + "'";
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  if (pipe == nullptr) {
    *ok = false;
    return out;
  }
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  *ok = pclose(pipe) == 0;
  return out;
}

TEST(OutputParserTemplateTest, RecoversRenderedAssistantTurns) {
  const std::string shared = SharedDir();
  if (!std::filesystem::exists(shared + "/testdata/templates/Qwen3.5-4B.jinja")) {
    GTEST_SKIP() << "no test data at DS_SHARED_DIR=" << shared;
  }
  if (std::system("python3 -c 'import jinja2' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "python3 with jinja2 is not installed (the oracle needs it)";
  }
  bool ok = false;
  const std::string out = RunOracle(shared, &ok);
  ASSERT_TRUE(ok) << "oracle failed";
  const Json cases = Json::parse(out);
  ASSERT_GE(cases.size(), 8u);
  for (const Json& c : cases) {
    SCOPED_TRACE(c["name"].get<std::string>());
    OutputParserOptions options;
    options.starts_in_reasoning = true;  // both templates end the prompt with "<think>\n"
    options.xml_tool_calls = c["syntax"] == "xml";
    options.json_tool_calls = c["syntax"] == "json";
    options.tools = c["tools"];
    const ParsedOutput parsed = testing::RunAllSplits(options, c["text"].get<std::string>());
    EXPECT_EQ(parsed.reasoning, c["reasoning"].get<std::string>());
    EXPECT_EQ(parsed.content, c["content"].get<std::string>());
    ASSERT_EQ(parsed.tool_calls.size(), c["tool_calls"].size());
    for (size_t i = 0; i < parsed.tool_calls.size(); ++i) {
      EXPECT_EQ(parsed.tool_calls[i].name, c["tool_calls"][i]["name"].get<std::string>());
      EXPECT_EQ(Json::parse(parsed.tool_calls[i].arguments_json), c["tool_calls"][i]["arguments"])
          << parsed.tool_calls[i].arguments_json;
    }
  }
}

}  // namespace
}  // namespace ds::text
