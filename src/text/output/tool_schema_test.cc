#include "text/output/tool_schema.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ds::text {
namespace {

using Json = nlohmann::json;
using Types = std::vector<std::string>;

TEST(ToolSchemasTest, ReadsOpenAiFlatAndAnthropicShapes) {
  const Json tools = Json::parse(R"([
    {"type": "function", "function": {"name": "read_file", "parameters": {"type": "object",
      "properties": {"file_path": {"type": "string"}, "offset": {"type": "integer"},
                     "limit": {"type": ["integer", "null"]}}}}},
    {"name": "Bash", "input_schema": {"type": "object", "properties": {
      "command": {"type": "string"}, "timeout": {"type": "number"},
      "mode": {"anyOf": [{"type": "boolean"}, {"type": "array", "items": {}}]}}}},
    {"name": "flat", "parameters": {"properties": {"x": {"description": "no type"}}}},
    "garbage", {"type": "function"}, {"name": 5}
  ])");
  const ToolSchemas schemas(tools);
  EXPECT_EQ(schemas.ParamTypes("read_file", "file_path"), Types{"string"});
  EXPECT_EQ(schemas.ParamTypes("read_file", "offset"), Types{"integer"});
  EXPECT_EQ(schemas.ParamTypes("read_file", "limit"), (Types{"integer", "null"}));
  EXPECT_EQ(schemas.ParamTypes("Bash", "timeout"), Types{"number"});
  EXPECT_EQ(schemas.ParamTypes("Bash", "mode"), (Types{"boolean", "array"}));
  EXPECT_EQ(schemas.ParamTypes("flat", "x"), Types{});
  EXPECT_EQ(schemas.ParamTypes("read_file", "unknown"), Types{});
  EXPECT_EQ(schemas.ParamTypes("unknown", "file_path"), Types{});
  EXPECT_EQ(ToolSchemas(Json()).ParamTypes("read_file", "offset"), Types{});
}

TEST(XmlValueToJsonTest, StringsStayVerbatim) {
  EXPECT_EQ(XmlValueToJson("  5 ", {"string"}), "\"  5 \"");
  EXPECT_EQ(XmlValueToJson("null", {"string", "null"}), "\"null\"");
  EXPECT_EQ(XmlValueToJson("a\"b\n", {}), "\"a\\\"b\\n\"");  // unknown type: a string
  EXPECT_EQ(XmlValueToJson("42", {"integer", "string"}), "\"42\"");
}

TEST(XmlValueToJsonTest, TypedValuesParseOrFallBackToString) {
  EXPECT_EQ(XmlValueToJson("42", {"integer"}), "42");
  EXPECT_EQ(XmlValueToJson(" -7 ", {"integer"}), "-7");
  EXPECT_EQ(XmlValueToJson("4.5", {"integer"}), "\"4.5\"");
  EXPECT_EQ(XmlValueToJson("4.5", {"number"}), "4.5");
  EXPECT_EQ(XmlValueToJson("1e3", {"number"}), "1e3");
  EXPECT_EQ(XmlValueToJson("ten", {"number"}), "\"ten\"");
  EXPECT_EQ(XmlValueToJson("True", {"boolean"}), "true");
  EXPECT_EQ(XmlValueToJson("false", {"boolean"}), "false");
  EXPECT_EQ(XmlValueToJson("yes", {"boolean"}), "\"yes\"");
  EXPECT_EQ(XmlValueToJson("None", {"integer"}), "null");
  EXPECT_EQ(XmlValueToJson("null", {"object"}), "null");
  EXPECT_EQ(XmlValueToJson("{\"a\": [1, 2]}", {"object"}), "{\"a\": [1, 2]}");
  EXPECT_EQ(XmlValueToJson("[1, 2]", {"object"}), "\"[1, 2]\"");
  EXPECT_EQ(XmlValueToJson("[{\"content\": \"x\", \"status\": \"pending\"}]", {"array"}),
            "[{\"content\": \"x\", \"status\": \"pending\"}]");
  EXPECT_EQ(XmlValueToJson("[1, 2", {"array"}), "\"[1, 2\"");
  EXPECT_EQ(XmlValueToJson("3", {"boolean", "integer"}), "3");
}

}  // namespace
}  // namespace ds::text
