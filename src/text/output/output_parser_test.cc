// OutputParser: reasoning, content and the JSON tool-call form (Qwen3 / Qwen3-Next).
#include "text/output/output_parser.h"

#include <gtest/gtest.h>

#include <cctype>
#include <random>

#include "text/output/output_parser_test_util.h"

namespace ds::text {
namespace {

using testing::ExpectParse;
using testing::RunAllSplits;

OutputParserOptions Json(bool starts_in_reasoning = false) {
  OutputParserOptions o;
  o.json_tool_calls = true;
  o.starts_in_reasoning = starts_in_reasoning;
  return o;
}

OutputParserOptions Plain() { return OutputParserOptions(); }

TEST(OutputParserTest, PlainContentPassesThrough) {
  ExpectParse(Plain(), "Hello, world!\n\nSecond paragraph.  ", "",
              "Hello, world!\n\nSecond paragraph.  ", {});
  ExpectParse(Json(), "Hello, world!\n\n", "", "Hello, world!\n\n", {});
  ExpectParse(Plain(), "", "", "", {});
  ExpectParse(Json(), "x < y and a <tool but not a call </tool_call>", "",
              "x < y and a <tool but not a call </tool_call>", {});
}

TEST(OutputParserTest, ReasoningOpenedByThePrompt) {
  ExpectParse(Json(true), "Let me think.\nStep 2.\n</think>\n\nThe answer is 4.",
              "Let me think.\nStep 2.", "The answer is 4.", {});
  // No </think> before the end: all reasoning, trailing whitespace dropped.
  ExpectParse(Json(true), "\nStill thinking...\n\n", "Still thinking...", "", {});
  // Empty reasoning.
  ExpectParse(Json(true), "\n</think>\n\nHi", "", "Hi", {});
  // A partial tag at the end is reasoning text.
  ExpectParse(Json(true), "hmm </thi", "hmm </thi", "", {});
  // </think> and <tool_call> inside reasoning: the first closes it, the second is text.
  ExpectParse(Json(true), "use <tool_call> here</think>ok </think>", "use <tool_call> here",
              "ok </think>", {});
}

TEST(OutputParserTest, ReasoningOpenedByTheModel) {
  ExpectParse(Json(), "<think>\nabc\n</think>\n\nHi", "abc", "Hi", {});
  ExpectParse(Json(), "\n\n<think>abc</think>Hi", "abc", "Hi", {});
  ExpectParse(Json(), "<thinking>x", "", "<thinking>x", {});
  ExpectParse(Json(), "<thi", "", "<thi", {});
  // <think> is only recognised at the start.
  ExpectParse(Json(), "a <think>b</think> c", "", "a <think>b</think> c", {});
  // Without <think> at the start, </think> is content.
  ExpectParse(Json(), "a </think> b", "", "a </think> b", {});
}

TEST(OutputParserTest, ReasoningParsingOff) {
  OutputParserOptions o = Json(true);
  o.parse_reasoning = false;
  ExpectParse(o, "think\n</think>\n\nanswer", "", "think\n</think>\n\nanswer", {});
  o.starts_in_reasoning = false;
  ExpectParse(o, "<think>x</think>y", "", "<think>x</think>y", {});
}

TEST(OutputParserTest, UnicodeReasoningAndContent) {
  ExpectParse(Json(true), "考える 🤔\n</think>\n\n答えは「四」です。🎉",
              "考える 🤔", "答えは「四」です。🎉", {});
}

TEST(OutputParserTest, JsonToolCall) {
  ExpectParse(Json(),
              "I'll read the file.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": "
              "{\"file_path\": \"/home/user/demo/main.py\"}}\n</tool_call>",
              "", "I'll read the file.",
              {{"read_file", "{\"file_path\": \"/home/user/demo/main.py\"}"}});
  ExpectParse(Json(), "<tool_call>{\"name\":\"f\",\"arguments\":{}}</tool_call>", "", "",
              {{"f", "{}"}});
}

TEST(OutputParserTest, JsonToolCallAfterReasoning) {
  ExpectParse(Json(true),
              "The user wants main.py.\n</think>\n\n<tool_call>\n{\"name\": \"read_file\", "
              "\"arguments\": {\"path\": \"main.py\"}}\n</tool_call>",
              "The user wants main.py.", "", {{"read_file", "{\"path\": \"main.py\"}"}});
}

TEST(OutputParserTest, ParallelJsonToolCallsAndContentAfter) {
  ExpectParse(Json(),
              "Two reads.\n<tool_call>\n{\"name\": \"read\", \"arguments\": {\"path\": \"a.py\"}}\n"
              "</tool_call>\n<tool_call>\n{\"name\": \"read\", \"arguments\": {\"path\": \"b.py\"}}"
              "\n</tool_call>\n\nDone.",
              "", "Two reads.Done.",
              {{"read", "{\"path\": \"a.py\"}"}, {"read", "{\"path\": \"b.py\"}"}});
}

TEST(OutputParserTest, JsonArgumentsWithTagsInsideStringsNestingAndUnicode) {
  const std::string args =
      "{\"command\": \"echo '</tool_call>' && cat <<EOF\\n<tool_call>\\nEOF\", "
      "\"options\": {\"env\": {\"LANG\": \"ja_JP.UTF-8\"}, \"list\": [1, 2.5e-3, -0, true, "
      "null, {\"k\": [\"}\", \"]\", \"\\\"\"]}]}, \"note\": \"日本語 🎉 \\u00e9 \\ud83d\\ude00\"}";
  ExpectParse(Json(),
              "<tool_call>\n{\"name\": \"Bash\", \"arguments\": " + args + "}\n</tool_call>", "",
              "", {{"Bash", args}});
}

TEST(OutputParserTest, RawNewlinesInJsonStringsAreEscaped) {
  ExpectParse(Json(),
              "<tool_call>\n{\"name\": \"write\", \"arguments\": {\"text\": \"line1\nline2\"}}\n"
              "</tool_call>",
              "", "", {{"write", "{\"text\": \"line1\\nline2\"}"}});
}

TEST(OutputParserTest, OtherJsonLayoutsAreParsedWhole) {
  // Key order differs from the template's: buffered to </tool_call>, order kept.
  ExpectParse(Json(),
              "<tool_call>\n{\"arguments\": {\"b\": 1, \"a\": [true]}, \"name\": \"f\"}\n"
              "</tool_call>",
              "", "", {{"f", "{\"b\":1,\"a\":[true]}"}});
  // Arguments as a JSON string, "parameters" instead of "arguments", no arguments.
  ExpectParse(Json(),
              "<tool_call>{\"name\": \"f\", \"arguments\": \"{\\\"x\\\": 2}\"}</tool_call>"
              "<tool_call>{\"name\": \"g\", \"parameters\": {\"y\": 3}}</tool_call>"
              "<tool_call>{\"name\": \"h\"}</tool_call>",
              "", "", {{"f", "{\"x\":2}"}, {"g", "{\"y\":3}"}, {"h", "{}"}});
  // Unterminated block that is nevertheless a whole call.
  ExpectParse(Json(), "<tool_call>\n{\"name\": \"h\"}\n", "", "", {{"h", "{}"}});
}

TEST(OutputParserTest, MalformedBlocksBeforeAnnouncementAreContentVerbatim) {
  const std::vector<std::string> texts = {
      "Text\n\n<tool_call>\nnot json\n</tool_call> after",
      "Text\n<tool_call>\n{\"name\": 5, \"arguments\": {}}\n</tool_call>",
      "Text\n<tool_call>\n{\"arguments\": {\"a\": 1}, \"name\": \"f\"\n</tool_call>\nmore",
      "Text\n<tool_call>\n{\"name\": \"f\", \"arguments\": [1]}\n</tool_call>",
      "Text\n<tool_call>\n{\"name\": \"f\", \"argu",
      "Text\n<tool_call>\n{\"name\": \"",
      "Text\n<tool_call>\n",
      "Text\n<tool_call>",
      "Text <tool_c",
  };
  for (const std::string& text : texts) {
    ExpectParse(Json(), text, "", text, {});
  }
  // The first tag is not followed by a call, the second is.
  ExpectParse(Json(), "<tool_call><tool_call>{\"name\":\"f\",\"arguments\":{}}</tool_call>", "",
              "<tool_call>", {{"f", "{}"}});
  // The XML form is plain content when only JSON calls are accepted.
  const std::string xml = "<tool_call>\n<function=f>\n</function>\n</tool_call>";
  ExpectParse(Json(), xml, "", xml, {});
}

TEST(OutputParserTest, CutOffArgumentsAreClosed) {
  const std::string head = "Hi\n<tool_call>\n{\"name\": \"f\", \"arguments\": ";
  ExpectParse(Json(), head + "{", "", "Hi", {{"f", "{}"}});
  ExpectParse(Json(), head + "{\"a\": \"hel", "", "Hi", {{"f", "{\"a\": \"hel\"}"}});
  ExpectParse(Json(), head + "{\"a\": \"x\\u00", "", "Hi\\u00", {{"f", "{\"a\": \"x\"}"}});
  ExpectParse(Json(), head + "{\"a\": [1, {\"b\": 12", "", "Hi",
              {{"f", "{\"a\": [1, {\"b\": 12}]}"}});
  // What could not be kept comes back as content.
  ExpectParse(Json(), head + "{\"a\": 1, \"b", "", "Hi, \"b", {{"f", "{\"a\": 1}"}});
  ExpectParse(Json(), head + "{\"a\": 1, \"b\": tr", "", "Hi, \"b\": tr", {{"f", "{\"a\": 1}"}});
  ExpectParse(Json(), head + "{\"a\": -", "", "Hi\"a\": -", {{"f", "{}"}});
}

TEST(OutputParserTest, InvalidArgumentsAfterAnnouncementAreClosedAndTheRestIsContent) {
  ExpectParse(Json(),
              "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"ok\": 1, \"a\": 'x'}}\n</tool_call>"
              "\nAfter",
              "", ", \"a\": 'x'}}\n</tool_call>\nAfter", {{"f", "{\"ok\": 1}"}});
  // Text between the arguments and </tool_call>.
  ExpectParse(Json(), "<tool_call>{\"name\": \"f\", \"arguments\": {}} junk</tool_call>tail", "",
              "junk</tool_call>tail", {{"f", "{}"}});
  // A missing outer '}' is tolerated.
  ExpectParse(Json(), "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}\n</tool_call>", "",
              "", {{"f", "{\"a\": 1}"}});
}

TEST(OutputParserTest, ToolCallsDisabledLeaveTagsAsContent) {
  const std::string text = "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>";
  ExpectParse(Plain(), text, "", text, {});
}

TEST(OutputParserTest, IdsAreSeededPrefixedAndDistinct) {
  OutputParserOptions o = Json();
  o.tool_call_id_seed = 99;
  o.tool_call_id_prefix = "toolu_";
  const std::string text =
      "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>"
      "<tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call>";
  const ParsedOutput first = RunAllSplits(o, text);
  const ParsedOutput second = RunAllSplits(o, text);
  ASSERT_EQ(first.tool_calls.size(), 2u);
  EXPECT_EQ(first.tool_calls[0].id, second.tool_calls[0].id);
  EXPECT_NE(first.tool_calls[0].id, first.tool_calls[1].id);
  EXPECT_TRUE(first.tool_calls[0].id.starts_with("toolu_"));
  for (char c : first.tool_calls[0].id.substr(6)) EXPECT_TRUE(std::isalnum(c)) << c;
  o.tool_call_id_seed = 100;
  EXPECT_NE(RunAllSplits(o, text).tool_calls[0].id, first.tool_calls[0].id);
}

TEST(OutputParserTest, StreamsArgumentsAndHoldsBackOnlyUndecidedText) {
  OutputParser parser(Json());
  std::vector<OutputEvent> events = parser.Push("Sure.\n<tool_");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, OutputEvent::Kind::kContentDelta);
  EXPECT_EQ(events[0].text, "Sure.");
  events = parser.Push("call>\n{\"name\": \"read\", \"argu");
  EXPECT_TRUE(events.empty());
  events = parser.Push("ments\": {\"path\": \"a");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, OutputEvent::Kind::kToolCallBegin);
  EXPECT_EQ(events[0].tool_name, "read");
  EXPECT_EQ(events[1].kind, OutputEvent::Kind::kToolCallArgumentsDelta);
  EXPECT_EQ(events[1].text, "{\"path\": \"a");
  events = parser.Push(".py\"}}\n</tool_call>");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].text, ".py\"}");
  EXPECT_EQ(events[1].kind, OutputEvent::Kind::kToolCallEnd);
  EXPECT_TRUE(parser.Finish().empty());
  EXPECT_EQ(parser.Result().tool_calls[0].arguments_json, "{\"path\": \"a.py\"}");
}

TEST(OutputParserTest, PiecesEndingInsideACharacterAreHeld) {
  OutputParser parser(Plain());
  const std::string emoji = "🎉";
  std::vector<OutputEvent> events = parser.Push("a" + emoji.substr(0, 2));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].text, "a");
  events = parser.Push(emoji.substr(2));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].text, emoji);
}

// Random well-formed turns (reasoning, content, JSON and XML calls), then damaged: cut short,
// a span deleted or a markup fragment inserted. Every split agrees, events are well formed and
// arguments are JSON objects (checked by RunAllSplits); with reasoning off, output without any
// announced call is the input verbatim.
std::string RandomTurn(std::mt19937& rng) {
  static const std::vector<std::string> kCalls = {
      "<tool_call>\n<function=f>\n<parameter=a>\nv \"é\"\n\n</parameter>\n<parameter=n>\n12\n"
      "</parameter>\n</function>\n</tool_call>",
      "<tool_call>\n<function=g>\n</function>\n<function=f>\n<parameter=n>\nx\n</parameter>\n"
      "</function>\n</tool_call>",
      "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": [1, -2.5e3, true, null], "
      "\"b\": {\"c\": \"\\u00e9\\\"🎉\"}}}\n</tool_call>",
      "<tool_call>{\"arguments\": {\"a\": 1}, \"name\": \"g\"}</tool_call>",
  };
  std::string text;
  if (rng() % 2) text += "think é\n</think>\n\n";
  if (rng() % 2) text += "Content 🎉 x < y.";
  const int num_calls = static_cast<int>(rng() % 3);
  for (int i = 0; i < num_calls; ++i) text += "\n\n" + kCalls[rng() % kCalls.size()];
  if (rng() % 3 == 0) text += "\nafter";
  return text;
}

void Damage(std::mt19937& rng, std::string* text) {
  static const std::vector<std::string> kFragments = {
      "<tool_call>", "</tool_call>", "<tool_c", "</think>", "</thi", "\n", " ", "<function=f>",
      "</function>", "<parameter=a>", "</parameter>", "</param", "{", "}", "\"", ",", "\\",
      "\"k\": ", "1", "tru", "é", "<", "\\ud83d"};
  if (text->empty()) return;
  // Damage happens at character boundaries: the detokenizer never releases part of a character.
  auto boundary = [&](size_t i) {
    while (i < text->size() && (static_cast<unsigned char>((*text)[i]) & 0xC0) == 0x80) ++i;
    return i;
  };
  const size_t pos = boundary(rng() % (text->size() + 1));
  switch (rng() % 4) {
    case 0:
      text->resize(pos);
      break;
    case 1:
      text->erase(pos, boundary(pos + 1 + rng() % 5) - pos);
      break;
    case 2:
      text->insert(pos, kFragments[rng() % kFragments.size()]);
      break;
    default:
      break;
  }
  ASSERT_TRUE(testing::IsValidUtf8(*text));
}

TEST(OutputParserTest, RandomDamagedTurnsKeepEveryInvariant) {
  std::mt19937 rng(2024);
  int num_with_calls = 0;
  for (int trial = 0; trial < 150; ++trial) {
    std::string text = RandomTurn(rng);
    Damage(rng, &text);
    OutputParserOptions o;
    o.json_tool_calls = rng() % 4 != 0;
    o.xml_tool_calls = rng() % 4 != 0;
    o.parse_reasoning = rng() % 3 != 0;
    o.starts_in_reasoning = rng() % 2 == 0;
    o.tools = nlohmann::json::parse(
        R"([{"name": "f", "parameters": {"properties": {"n": {"type": "integer"}}}}])");
    SCOPED_TRACE(text);
    const ParsedOutput out = RunAllSplits(o, text);
    num_with_calls += !out.tool_calls.empty();
    if (!o.parse_reasoning && out.tool_calls.empty()) {
      EXPECT_EQ(out.content, text);
    }
  }
  EXPECT_GT(num_with_calls, 40);
}

}  // namespace
}  // namespace ds::text
