#include "text/unicode.h"

#include <gtest/gtest.h>

#include "text/nfc.h"

namespace ds::text {
namespace {

TEST(Utf8Strict, ClassifiesSequences) {
  EXPECT_EQ(DecodeUtf8Strict("A").status, Utf8Status::kComplete);
  EXPECT_EQ(DecodeUtf8Strict("\xC3\xA9").length, 2u);
  EXPECT_EQ(DecodeUtf8Strict("\xF0\x9F\xA6\x99").length, 4u);
  EXPECT_EQ(DecodeUtf8Strict("\xE6\x97").status, Utf8Status::kIncomplete);
  EXPECT_EQ(DecodeUtf8Strict("\xF0").status, Utf8Status::kIncomplete);
  // Overlong, surrogate, beyond U+10FFFF, lone continuation: invalid.
  EXPECT_EQ(DecodeUtf8Strict("\xC0\x80").status, Utf8Status::kInvalid);
  EXPECT_EQ(DecodeUtf8Strict("\xED\xA0\x80").status, Utf8Status::kInvalid);
  EXPECT_EQ(DecodeUtf8Strict("\xF4\x90\x80\x80").status, Utf8Status::kInvalid);
  EXPECT_EQ(DecodeUtf8Strict("\x80").status, Utf8Status::kInvalid);
  // A lead byte followed by a non-continuation: the lead alone is the ill-formed part.
  const Utf8Step step = DecodeUtf8Strict(
      "\xE6"
      "A");
  EXPECT_EQ(step.status, Utf8Status::kInvalid);
  EXPECT_EQ(step.length, 1u);
}

TEST(Utf8Strict, SanitizeReplacesIllFormedParts) {
  EXPECT_EQ(SanitizeUtf8("ok \xC3\xA9"), "ok \xC3\xA9");
  EXPECT_EQ(SanitizeUtf8("a\xFF"
                         "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(SanitizeUtf8("a\xE6\x97"), "a\xEF\xBF\xBD");
  EXPECT_TRUE(IsValidUtf8(SanitizeUtf8("\xED\xA0\x80\xC0\x80\xF8")));
  EXPECT_FALSE(IsValidUtf8("\xC3"));
}

TEST(Utf8Lenient, BadBytesBecomeReplacementCharacters) {
  EXPECT_EQ(CodepointsFromUtf8("a\xFF\xC3\xA9"), (std::vector<uint32_t>{'a', 0xFFFD, 0xE9}));
  EXPECT_EQ(CodepointsFromUtf8("\xE6\x97"), (std::vector<uint32_t>{0xFFFD, 0xFFFD}));
}

TEST(ByteLevel, Gpt2Alphabet) {
  EXPECT_EQ(ByteToByteLevel('A'), "A");
  EXPECT_EQ(ByteToByteLevel(' '), "\xC4\xA0");   // U+0120 'Ġ'
  EXPECT_EQ(ByteToByteLevel('\n'), "\xC4\x8A");  // U+010A 'Ċ'
  for (int b = 0; b < 256; ++b) {
    const std::vector<uint32_t> cps = CodepointsFromUtf8(ByteToByteLevel(static_cast<uint8_t>(b)));
    ASSERT_EQ(cps.size(), 1u);
    EXPECT_EQ(ByteLevelToByte(cps[0]), b);
  }
  EXPECT_EQ(ByteLevelToByte(0x4E00), -1);
}

TEST(Nfc, ComposesReordersAndKeepsExclusions) {
  EXPECT_EQ(NormalizeNfc("plain ascii"), "plain ascii");
  EXPECT_EQ(NormalizeNfc("e\xCC\x81"), "\xC3\xA9");              // e + U+0301 -> é
  EXPECT_EQ(NormalizeNfc("e\xCC\xA3\xCC\x82"), "\xE1\xBB\x87");  // e + dot below + circumflex
  EXPECT_EQ(NormalizeNfc("e\xCC\x82\xCC\xA3"), "\xE1\xBB\x87");  // other order, same result
  EXPECT_EQ(NormalizeNfc("\xE2\x84\xAB"), "\xC3\x85");           // U+212B -> U+00C5
  EXPECT_EQ(NormalizeNfc("\xE1\x84\x80\xE1\x85\xA1"), "\xEA\xB0\x80");  // L + V -> U+AC00
  EXPECT_EQ(NormalizeNfc("\xE0\xA5\x98"), "\xE0\xA4\x95\xE0\xA4\xBC");  // U+0958 is excluded
  EXPECT_EQ(NormalizeNfc("\xC3\xA9\xE4\xBD\xA0"), "\xC3\xA9\xE4\xBD\xA0");
}

}  // namespace
}  // namespace ds::text
