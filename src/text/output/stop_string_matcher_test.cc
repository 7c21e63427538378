#include "text/output/stop_string_matcher.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "text/output/scan_util.h"

namespace ds::text {
namespace {

struct Outcome {
  std::string text;
  bool stopped = false;
  std::string stop;
  bool operator==(const Outcome&) const = default;
};

Outcome Run(const std::vector<std::string>& stops, const std::vector<std::string>& pieces) {
  StopStringMatcher m(stops);
  Outcome o;
  for (const std::string& p : pieces) {
    StopStringMatcher::Result r = m.Push(p);
    o.text += r.text;
    if (r.stopped) {
      o.stopped = true;
      o.stop = m.matched_stop_string();
      EXPECT_TRUE(m.Push("more").stopped);
      EXPECT_EQ(m.Flush(), "");
      return o;
    }
  }
  o.text += m.Flush();
  return o;
}

// Every split into 1-byte pieces, every split into two pieces, and random splits agree.
void ExpectSplitInvariant(const std::vector<std::string>& stops, const std::string& text,
                          const Outcome& expected) {
  EXPECT_EQ(Run(stops, {text}), expected) << text;
  std::vector<std::string> bytes;
  for (char c : text) bytes.emplace_back(1, c);
  EXPECT_EQ(Run(stops, bytes), expected) << text << " bytewise";
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    EXPECT_EQ(Run(stops, {text.substr(0, cut), text.substr(cut)}), expected) << text << " @" << cut;
  }
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<std::string> pieces;
    for (size_t i = 0; i < text.size();) {
      const size_t n = std::min<size_t>(text.size() - i, rng() % 5);
      pieces.push_back(text.substr(i, n));
      i += n;
    }
    EXPECT_EQ(Run(stops, pieces), expected) << text << " random";
  }
}

TEST(FindTagTest, FullPartialAndNone) {
  using scan::FindTag;
  using scan::TagMatch;
  EXPECT_EQ(FindTag("ab<tool_call>x", "<tool_call>").pos, 2u);
  EXPECT_TRUE(FindTag("ab<tool_call>x", "<tool_call>").found());
  const TagMatch partial = FindTag("ab<tool", "<tool_call>");
  EXPECT_EQ(partial.pos, 2u);
  EXPECT_TRUE(partial.partial);
  EXPECT_FALSE(partial.found());
  EXPECT_EQ(FindTag("ab<too x", "<tool_call>").pos, std::string_view::npos);
  EXPECT_EQ(FindTag("", "<t").pos, std::string_view::npos);
}

TEST(StopStringMatcherTest, NoStopStringsPassesEverythingThrough) {
  ExpectSplitInvariant({}, "hello world", {"hello world", false, ""});
  ExpectSplitInvariant({""}, "hello world", {"hello world", false, ""});
}

TEST(StopStringMatcherTest, StopsBeforeTheStopString) {
  ExpectSplitInvariant({"STOP"}, "abc STOP def", {"abc ", true, "STOP"});
  ExpectSplitInvariant({"STOP"}, "STOP", {"", true, "STOP"});
  ExpectSplitInvariant({"\n\n"}, "line\n\nnext", {"line", true, "\n\n"});
}

TEST(StopStringMatcherTest, PartialMatchesAreReleasedWhenTheyFail) {
  ExpectSplitInvariant({"STOP"}, "STO STOx ST", {"STO STOx ST", false, ""});
  ExpectSplitInvariant({"<|im_end|>"}, "a <|im_e b <|", {"a <|im_e b <|", false, ""});
}

TEST(StopStringMatcherTest, HoldsBackOnlyWhatCouldStillMatch) {
  StopStringMatcher m({"abc"});
  EXPECT_EQ(m.Push("xxab").text, "xx");
  EXPECT_EQ(m.Push("x").text, "abx");
  EXPECT_EQ(m.Push("a").text, "");
  EXPECT_EQ(m.Flush(), "a");
}

TEST(StopStringMatcherTest, OverlappingStopStringsTheFirstToCompleteWins) {
  // "ab" completes before "abc" could.
  ExpectSplitInvariant({"abc", "ab"}, "xxabcyy", {"xx", true, "ab"});
  // Both end at the same byte: the earlier start (longer) wins.
  ExpectSplitInvariant({"ab", "xab"}, "zxabq", {"z", true, "xab"});
  // "bcd" ends before "abcdef" would.
  ExpectSplitInvariant({"abcdef", "bcd"}, "_abcdef", {"_a", true, "bcd"});
  // The self-overlapping prefix "aab" inside "aaab".
  ExpectSplitInvariant({"aab"}, "aaab", {"a", true, "aab"});
  ExpectSplitInvariant({"aab", "aaac"}, "aaaab", {"aa", true, "aab"});
}

TEST(StopStringMatcherTest, UnicodeStopStrings) {
  ExpectSplitInvariant({"。終"}, "日本語。終わり", {"日本語", true, "。終"});
  ExpectSplitInvariant({"🎉!"}, "ok 🎉 🎉!", {"ok 🎉 ", true, "🎉!"});
}

}  // namespace
}  // namespace ds::text
