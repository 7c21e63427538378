// OutputParser: the XML tool-call form (Qwen3-Coder / Qwen3.5).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "text/output/output_parser.h"
#include "text/output/output_parser_test_util.h"

namespace ds::text {
namespace {

using testing::ExpectParse;

// As the Qwen3.5 template writes one call: `<tool_call>\n<function=NAME>\n` then per argument
// `<parameter=K>\nV\n</parameter>\n`, then `</function>\n</tool_call>`.
std::string XmlCall(const std::string& name,
                    const std::vector<std::pair<std::string, std::string>>& params) {
  std::string s = "<tool_call>\n<function=" + name + ">\n";
  for (const auto& [k, v] : params) s += "<parameter=" + k + ">\n" + v + "\n</parameter>\n";
  return s + "</function>\n</tool_call>";
}

OutputParserOptions Xml(bool starts_in_reasoning = true) {
  OutputParserOptions o;
  o.xml_tool_calls = true;
  o.starts_in_reasoning = starts_in_reasoning;
  return o;
}

nlohmann::json Tools() {
  return nlohmann::json::parse(R"([
    {"type": "function", "function": {"name": "read_file", "parameters": {"type": "object",
      "properties": {"file_path": {"type": "string"}, "offset": {"type": "integer"},
                     "limit": {"type": "number"}}}}},
    {"type": "function", "function": {"name": "todo_write", "parameters": {"type": "object",
      "properties": {"todos": {"type": "array"}, "merge": {"type": "boolean"},
                     "meta": {"type": "object"}, "id": {"type": "string"}}}}}
  ])");
}

TEST(OutputParserXmlTest, Qwen35TurnWithReasoningContentAndCall) {
  ExpectParse(Xml(),
              "The user wants main.py.\n</think>\n\nI'll read the file.\n\n" +
                  XmlCall("read_file", {{"file_path", "/home/user/demo/main.py"}}),
              "The user wants main.py.", "I'll read the file.",
              {{"read_file", "{\"file_path\": \"/home/user/demo/main.py\"}"}});
}

TEST(OutputParserXmlTest, StringValuesKeepIndentationAndInnerNewlines) {
  const std::string code = "    def f():\n        return \"1\\n\"\n\n";
  ExpectParse(Xml(false), XmlCall("edit", {{"old_string", code}, {"new_string", ""}}), "", "",
              {{"edit",
                "{\"old_string\": \"    def f():\\n        return \\\"1\\\\n\\\"\\n\\n\", "
                "\"new_string\": \"\"}"}});
  // Values without the template's newlines, and empty values.
  ExpectParse(Xml(false),
              "<tool_call><function=f><parameter=a>x</parameter><parameter=b></parameter>"
              "<parameter=c>\n\n</parameter></function></tool_call>",
              "", "", {{"f", "{\"a\": \"x\", \"b\": \"\", \"c\": \"\"}"}});
}

TEST(OutputParserXmlTest, ValuesAreTypedByTheToolSchemas) {
  OutputParserOptions o = Xml(false);
  o.tools = Tools();
  ExpectParse(o,
              XmlCall("read_file",
                      {{"file_path", "a.py"}, {"offset", "10"}, {"limit", "2.5"}, {"extra", "7"}}),
              "", "",
              {{"read_file",
                "{\"file_path\": \"a.py\", \"offset\": 10, \"limit\": 2.5, \"extra\": \"7\"}"}});
  ExpectParse(o,
              XmlCall("todo_write", {{"todos", "[{\"content\": \"x\", \"status\": \"pending\"}]"},
                                     {"merge", "True"},
                                     {"meta", "{\"a\": null}"},
                                     {"id", "123"}}),
              "", "",
              {{"todo_write",
                "{\"todos\": [{\"content\": \"x\", \"status\": \"pending\"}], \"merge\": true, "
                "\"meta\": {\"a\": null}, \"id\": \"123\"}"}});
  // Values that do not parse as their type stay strings.
  ExpectParse(o, XmlCall("read_file", {{"offset", "ten"}, {"limit", "[1"}}), "", "",
              {{"read_file", "{\"offset\": \"ten\", \"limit\": \"[1\"}"}});
  // Without schemas everything is a string.
  ExpectParse(Xml(false), XmlCall("read_file", {{"offset", "10"}}), "", "",
              {{"read_file", "{\"offset\": \"10\"}"}});
}

TEST(OutputParserXmlTest, ParallelCallsAndSeveralFunctionsInOneBlock) {
  ExpectParse(Xml(false),
              "Reading both.\n\n" + XmlCall("read", {{"path", "a.py"}}) + "\n" +
                  XmlCall("read", {{"path", "b.py"}}),
              "", "Reading both.",
              {{"read", "{\"path\": \"a.py\"}"}, {"read", "{\"path\": \"b.py\"}"}});
  ExpectParse(Xml(false),
              "<tool_call>\n<function=a>\n</function>\n<function=b>\n<parameter=x>\n1\n"
              "</parameter>\n</function>\n</tool_call>\nafter",
              "", "after", {{"a", "{}"}, {"b", "{\"x\": \"1\"}"}});
}

TEST(OutputParserXmlTest, MarkupInsideValuesUnicodeAndEscapes) {
  ExpectParse(
      Xml(false),
      XmlCall("write", {{"content", "<tool_call>\n<parameter=x>\n</tool_call> \"q\" \\ 日本 🎉"},
                        {"path", "ü.txt"}}),
      "", "",
      {{"write",
        "{\"content\": \"<tool_call>\\n<parameter=x>\\n</tool_call> \\\"q\\\" \\\\ 日本 "
        "🎉\", \"path\": \"ü.txt\"}"}});
}

TEST(OutputParserXmlTest, MalformedBeforeAnnouncementIsContentVerbatim) {
  const std::vector<std::string> texts = {
      "Text\n\n<tool_call>\n<function=>\n</function>\n</tool_call>",
      "Text\n\n<tool_call>\n<function=a b\nc>\n",
      "Text\n\n<tool_call>\nhello</tool_call>\nmore",
      "Text\n\n<tool_call>\n<func",
      "Text\n\n<tool_call>\n<function=read_file",
      "Text\n\n<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>",
  };
  for (const std::string& text : texts) ExpectParse(Xml(false), text, "", text, {});
}

TEST(OutputParserXmlTest, CutOffCallsAreClosed) {
  OutputParserOptions o = Xml(false);
  o.tools = Tools();
  const std::string head = "Hi\n\n<tool_call>\n<function=read_file>\n";
  ExpectParse(o, head, "", "Hi", {{"read_file", "{}"}});
  ExpectParse(o, head + "<parameter=file_path>\nabc\ndef", "", "Hi",
              {{"read_file", "{\"file_path\": \"abc\\ndef\"}"}});
  ExpectParse(o, head + "<parameter=file_path>\nabc\n</para", "", "Hi",
              {{"read_file", "{\"file_path\": \"abc\"}"}});
  ExpectParse(o, head + "<parameter=file_path>\n", "", "Hi",
              {{"read_file", "{\"file_path\": \"\"}"}});
  ExpectParse(o, head + "<parameter=offset>\n12", "", "Hi", {{"read_file", "{\"offset\": 12}"}});
  ExpectParse(o, head + "<parameter=offs", "", "Hi<parameter=offs", {{"read_file", "{}"}});
}

TEST(OutputParserXmlTest, StrayTextInsideACallEndsItAndIsContent) {
  ExpectParse(Xml(false),
              "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\nrandom text\n</function>"
              "\n</tool_call>\nend",
              "", "random text\n</function>\n</tool_call>\nend", {{"f", "{\"a\": \"1\"}"}});
  ExpectParse(Xml(false), "<tool_call>\n<function=f>\n</function>\noops</tool_call>", "",
              "oops</tool_call>", {{"f", "{}"}});
}

TEST(OutputParserXmlTest, BothSyntaxesAccepted) {
  OutputParserOptions o = Xml(false);
  o.json_tool_calls = true;
  ExpectParse(o,
              "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": 1}}\n</tool_call>\n" +
                  XmlCall("b", {{"y", "2"}}),
              "", "", {{"a", "{\"x\": 1}"}, {"b", "{\"y\": \"2\"}"}});
}

TEST(OutputParserXmlTest, StringValuesStreamBeforeTheirClosingTag) {
  OutputParser parser(Xml(false));
  parser.Push("<tool_call>\n<function=write>\n<parameter=content>\nline 1\n");
  const std::string so_far = parser.Result().tool_calls.at(0).arguments_json;
  EXPECT_EQ(so_far, "{\"content\": \"line 1");  // the final newline is held back
  parser.Push("line 2\n</parameter>\n</function>\n</tool_call>");
  parser.Finish();
  EXPECT_EQ(parser.Result().tool_calls.at(0).arguments_json, "{\"content\": \"line 1\\nline 2\"}");
}

}  // namespace
}  // namespace ds::text
