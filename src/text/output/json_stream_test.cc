#include "text/output/json_stream.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ds::text {
namespace {

using Json = nlohmann::json;

const std::vector<std::string>& ValidValues() {
  static const std::vector<std::string> values = {
      "{}",
      "[]",
      R"({"a": 1})",
      R"({"path": "/home/user/demo/main.py", "limit": 20, "offset": -3.5e+2})",
      R"({"nested": {"deep": [1, [2, {"x": null}], true, false]}, "e": ""})",
      R"({ "s" : "quote \" backslash \\ slash \/ \b\f\n\r\t \u00e9 \ud83d\ude00" } )",
      R"({"code": "</tool_call> and </parameter> inside a string", "z": 0})",
      R"(["unicode é 日本語 🎉", 0.25, 1E9, -0, 10e-3])",
      "{\n  \"pretty\": [\n    1,\n    2\n  ]\n}",
  };
  return values;
}

// Feeds `text` in pieces of `piece` bytes; returns the released text.
std::string FeedInPieces(JsonStreamer* s, const std::string& text, size_t piece, size_t* consumed) {
  std::string out;
  *consumed = 0;
  while (*consumed < text.size() && s->status() == JsonStreamer::Status::kInProgress) {
    const std::string_view part = std::string_view(text).substr(*consumed, piece);
    *consumed += s->Feed(part, &out);
  }
  return out;
}

TEST(JsonStreamerTest, ValidValuesPassThroughUnchangedForEveryPieceSize) {
  for (const std::string& value : ValidValues()) {
    for (size_t piece : {size_t{1}, size_t{2}, size_t{3}, size_t{7}, value.size()}) {
      JsonStreamer s;
      size_t consumed = 0;
      const std::string out = FeedInPieces(&s, value, piece, &consumed);
      EXPECT_EQ(s.status(), JsonStreamer::Status::kComplete) << value;
      const size_t end = value.find_last_of("}]") + 1;
      EXPECT_EQ(consumed, end) << value;
      EXPECT_EQ(out, value.substr(0, end));
      EXPECT_EQ(s.ClosingText(), "");
    }
  }
}

TEST(JsonStreamerTest, EveryPrefixClosesIntoValidJsonThatExtendsMonotonically) {
  for (const std::string& value : ValidValues()) {
    std::string released;
    JsonStreamer s;
    for (size_t i = 0; i < value.size() && s.status() == JsonStreamer::Status::kInProgress; ++i) {
      s.Feed(std::string_view(value).substr(i, 1), &released);
      ASSERT_EQ(value.compare(0, released.size(), released), 0) << "released is not a prefix";
      if (s.status() != JsonStreamer::Status::kInProgress) break;
      std::string healed = released + s.ClosingText();
      std::string at_end = released;
      JsonStreamer copy = s;
      copy.EndOfInput(&at_end);
      at_end += copy.ClosingText();
      EXPECT_TRUE(Json::accept(healed)) << value << " prefix " << i << ": " << healed;
      EXPECT_TRUE(Json::accept(at_end)) << value << " prefix " << i << ": " << at_end;
    }
  }
}

TEST(JsonStreamerTest, HoldsKeysCommasAndPartialScalarsUntilComplete) {
  JsonStreamer s;
  std::string out;
  s.Feed(R"({"a": 1, "b)", &out);
  EXPECT_EQ(out, R"({"a": 1)");
  EXPECT_EQ(s.unreleased_input(), R"(, "b)");
  s.Feed(R"(": tr)", &out);
  EXPECT_EQ(out, R"({"a": 1)");
  s.Feed("ue, \"c\": \"x", &out);
  EXPECT_EQ(out, R"({"a": 1, "b": true, "c": "x)");
  EXPECT_EQ(s.ClosingText(), "\"}");
  s.Feed("\\", &out);  // half an escape is held
  EXPECT_EQ(out, R"({"a": 1, "b": true, "c": "x)");
  s.Feed("u00e9\"}", &out);
  EXPECT_EQ(out, R"({"a": 1, "b": true, "c": "x\u00e9"})");
  EXPECT_EQ(s.status(), JsonStreamer::Status::kComplete);
}

TEST(JsonStreamerTest, NumberAtEndOfInputIsKeptWhenComplete) {
  JsonStreamer s;
  std::string out;
  s.Feed(R"({"n": 12)", &out);
  EXPECT_EQ(out, "{");
  s.EndOfInput(&out);
  EXPECT_EQ(out + s.ClosingText(), R"({"n": 12})");

  JsonStreamer t;
  out.clear();
  t.Feed(R"({"n": 1.)", &out);
  t.EndOfInput(&out);
  EXPECT_EQ(out + t.ClosingText(), "{}");
  EXPECT_EQ(t.unreleased_input(), R"("n": 1.)");
}

TEST(JsonStreamerTest, RawControlCharactersInStringsAreEscaped) {
  JsonStreamer s;
  std::string out;
  s.Feed("{\"code\": \"a\n\tb\x01\"}", &out);
  EXPECT_EQ(s.status(), JsonStreamer::Status::kComplete);
  EXPECT_EQ(out, R"({"code": "a\n\tb\u0001"})");
  EXPECT_EQ(Json::parse(out)["code"], "a\n\tb\x01");
}

TEST(JsonStreamerTest, RejectsInvalidJsonAtTheOffendingByte) {
  struct Case {
    std::string text;
    size_t consumed;
    std::string released;
  };
  const std::vector<Case> cases = {
      {"x", 0, ""},
      {R"({"a": 'x'})", 6, "{"},
      {R"({"a": 1,})", 8, R"({"a": 1)"},
      {R"({"a" 1})", 5, "{"},
      {R"({"a": 01})", 7, "{"},
      {R"({"a": tru })", 9, "{"},
      {R"({"a": "\x"})", 8, R"({"a": ")"},
      {R"({"a": "\udc00"})", 12, R"({"a": ")"},
      {R"({"a": "\ud800x"})", 13, R"({"a": ")"},
      {R"([1 2])", 3, "[1 "},
      {R"({"a": [1}})", 8, R"({"a": [1)"},
  };
  for (const Case& c : cases) {
    JsonStreamer s;
    std::string out;
    const size_t consumed = s.Feed(c.text, &out);
    EXPECT_EQ(s.status(), JsonStreamer::Status::kInvalid) << c.text;
    EXPECT_EQ(consumed, c.consumed) << c.text;
    EXPECT_EQ(out, c.released) << c.text;
    if (!out.empty()) {
      EXPECT_TRUE(Json::accept(out + s.ClosingText())) << c.text;
    }
  }
}

TEST(JsonEscapeTest, EscapesQuotesBackslashesAndControls) {
  std::string out;
  AppendJsonEscaped("a\"b\\c\n\x1f é", &out);
  EXPECT_EQ(out, "a\\\"b\\\\c\\n\\u001f é");
  EXPECT_EQ(Json::parse("\"" + out + "\""), "a\"b\\c\n\x1f é");
}

}  // namespace
}  // namespace ds::text
