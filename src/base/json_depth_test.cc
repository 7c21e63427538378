#include "base/json_depth.h"

#include <gtest/gtest.h>

#include <string>

namespace ds {
namespace {

std::string Nested(int levels, char open, char close) {
  return std::string(levels, open) + std::string(levels, close);
}

TEST(JsonDepthTest, CountsArraysAndObjectsTogether) {
  EXPECT_TRUE(JsonDepthWithin("[]", 1));
  EXPECT_FALSE(JsonDepthWithin("[[]]", 1));
  EXPECT_TRUE(JsonDepthWithin(R"({"a":[1,{"b":2}]})", 3));
  EXPECT_FALSE(JsonDepthWithin(R"({"a":[1,{"b":2}]})", 2));
  EXPECT_TRUE(JsonDepthWithin("[[],[],[]]", 2));
}

TEST(JsonDepthTest, BracketsInStringsAndEscapesDoNotCount) {
  EXPECT_TRUE(JsonDepthWithin(R"(["[[[[", "\"[[[[", "\\"])", 1));
  EXPECT_FALSE(JsonDepthWithin(R"(["\\", [[]]])", 2));
}

TEST(JsonDepthTest, TheDefaultBoundRefusesAttackDepthsOnly) {
  EXPECT_TRUE(JsonDepthWithin(Nested(kMaxJsonDepth, '[', ']')));
  EXPECT_FALSE(JsonDepthWithin(Nested(kMaxJsonDepth + 1, '[', ']')));
  EXPECT_FALSE(JsonDepthWithin(R"({"x":)" + Nested(40000, '[', ']') + "}"));
  // Unbalanced text: only the opening brackets matter.
  EXPECT_FALSE(JsonDepthWithin(std::string(200, '{')));
  EXPECT_TRUE(JsonDepthWithin(std::string(200, ']')));
}

}  // namespace
}  // namespace ds
