// Test helpers for OutputParser: run a text through the parser whole, byte by byte, cut at every
// position and in random pieces, check the event stream's invariants on every run, and require
// the same outcome from all of them.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "text/output/output_parser.h"

namespace ds::text::testing {

struct ExpectedCall {
  std::string name;
  std::string arguments_json;
};

inline bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

// A readable, complete rendering of an outcome, ids included.
inline std::string Describe(const ParsedOutput& out) {
  nlohmann::ordered_json j;
  j["reasoning"] = out.reasoning;
  j["content"] = out.content;
  j["tool_calls"] = nlohmann::ordered_json::array();
  for (const ParsedToolCall& c : out.tool_calls) {
    j["tool_calls"].push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments_json}});
  }
  return j.dump(1);
}

// Feeds the pieces, checks the event invariants, returns Describe() of the result.
inline std::string Run(const OutputParserOptions& options, const std::vector<std::string>& pieces,
                       ParsedOutput* parsed = nullptr) {
  OutputParser parser(options);
  std::vector<OutputEvent> events;
  for (const std::string& p : pieces) {
    for (OutputEvent& e : parser.Push(p)) events.push_back(std::move(e));
  }
  for (OutputEvent& e : parser.Finish()) events.push_back(std::move(e));
  ParsedOutput folded;
  int open_call = -1;
  for (const OutputEvent& e : events) {
    using Kind = OutputEvent::Kind;
    const bool delta = e.kind == Kind::kReasoningDelta || e.kind == Kind::kContentDelta ||
                       e.kind == Kind::kToolCallArgumentsDelta;
    EXPECT_TRUE(!delta || !e.text.empty()) << "empty delta";
    EXPECT_TRUE(IsValidUtf8(e.text)) << "event text is not whole UTF-8 characters";
    switch (e.kind) {
      case Kind::kReasoningDelta:
      case Kind::kContentDelta:
        EXPECT_EQ(open_call, -1) << "text while a call is open";
        break;
      case Kind::kToolCallBegin:
        EXPECT_EQ(open_call, -1) << "call begins inside another";
        EXPECT_EQ(e.tool_index, static_cast<int>(folded.tool_calls.size()));
        EXPECT_FALSE(e.tool_name.empty());
        EXPECT_TRUE(e.tool_call_id.starts_with(options.tool_call_id_prefix));
        EXPECT_EQ(e.tool_call_id.size(), options.tool_call_id_prefix.size() + 24);
        open_call = e.tool_index;
        break;
      case Kind::kToolCallArgumentsDelta:
        EXPECT_EQ(e.tool_index, open_call) << "arguments outside their call";
        break;
      case Kind::kToolCallEnd:
        EXPECT_EQ(e.tool_index, open_call);
        open_call = -1;
        break;
    }
    if (e.kind == Kind::kToolCallArgumentsDelta && e.tool_index != open_call) continue;
    FoldEvent(e, &folded);
  }
  EXPECT_EQ(open_call, -1) << "call left open after Finish";
  EXPECT_EQ(Describe(folded), Describe(parser.Result())) << "Result() is not the fold";
  for (const ParsedToolCall& c : folded.tool_calls) {
    const auto args = nlohmann::json::parse(c.arguments_json, nullptr, false);
    EXPECT_TRUE(args.is_object()) << "arguments are not a JSON object: " << c.arguments_json;
  }
  if (parsed != nullptr) *parsed = folded;
  return Describe(folded);
}

inline OutputParserOptions WithSeed(OutputParserOptions options) {
  if (!options.tool_call_id_seed) options.tool_call_id_seed = 1234;
  return options;
}

// Runs `text` whole, byte by byte, cut in two at every position and in random pieces; all runs
// must agree. Returns the outcome of the whole run.
inline ParsedOutput RunAllSplits(const OutputParserOptions& raw_options, const std::string& text) {
  const OutputParserOptions options = WithSeed(raw_options);
  ParsedOutput whole;
  const std::string expected = Run(options, {text}, &whole);
  std::vector<std::string> bytes;
  for (char c : text) bytes.emplace_back(1, c);
  EXPECT_EQ(Run(options, bytes), expected) << "byte by byte";
  // Every cut of short texts; long ones (rendered template turns) at a stride, since the
  // byte-by-byte run already passes every boundary.
  const size_t stride = text.size() <= 400 ? 1 : 5;
  for (size_t cut = 1; cut < text.size(); cut += stride) {
    EXPECT_EQ(Run(options, {text.substr(0, cut), text.substr(cut)}), expected) << "cut at " << cut;
  }
  std::mt19937 rng(static_cast<uint32_t>(text.size()));
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<std::string> pieces;
    for (size_t i = 0; i < text.size();) {
      const size_t n = std::min<size_t>(text.size() - i, rng() % 9);
      pieces.push_back(text.substr(i, n));
      i += n;
    }
    EXPECT_EQ(Run(options, pieces), expected) << "random pieces, trial " << trial;
  }
  return whole;
}

// RunAllSplits, then compares with the expected message (ids are not compared).
inline void ExpectParse(const OutputParserOptions& options, const std::string& text,
                        const std::string& reasoning, const std::string& content,
                        const std::vector<ExpectedCall>& calls) {
  SCOPED_TRACE(text);
  const ParsedOutput out = RunAllSplits(options, text);
  EXPECT_EQ(out.reasoning, reasoning);
  EXPECT_EQ(out.content, content);
  ASSERT_EQ(out.tool_calls.size(), calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(out.tool_calls[i].name, calls[i].name);
    EXPECT_EQ(out.tool_calls[i].arguments_json, calls[i].arguments_json);
  }
}

}  // namespace ds::text::testing
