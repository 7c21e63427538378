#include "text/detokenizer.h"

#include <gtest/gtest.h>

#include "text/test_vocabs.h"

namespace ds::text {
namespace {

class Detokenizer : public ::testing::Test {
 protected:
  void SetUp() override {
    // Byte-level BPE with no merges: token b is byte b.
    auto t = Tokenizer::FromVocab(testing::TinyBpeVocab({}, {}));
    ASSERT_TRUE(t.ok());
    tokenizer_ = std::move(t).value();
  }
  std::unique_ptr<Tokenizer> tokenizer_;
};

TEST_F(Detokenizer, HoldsBackIncompleteCharacters) {
  IncrementalDetokenizer d(tokenizer_.get());
  EXPECT_EQ(d.Push('a'), "a");
  // U+1F999 (F0 9F A6 99) one byte at a time.
  EXPECT_EQ(d.Push(0xF0), "");
  EXPECT_EQ(d.Push(0x9F), "");
  EXPECT_EQ(d.Push(0xA6), "");
  EXPECT_EQ(d.num_pending_bytes(), 3u);
  EXPECT_EQ(d.Push(0x99), "\xF0\x9F\xA6\x99");
  EXPECT_EQ(d.Flush(), "");
}

TEST_F(Detokenizer, ReplacesBytesThatCanNeverComplete) {
  IncrementalDetokenizer d(tokenizer_.get());
  EXPECT_EQ(d.Push(0xC3), "");
  EXPECT_EQ(d.Push('A'),
            "\xEF\xBF\xBD"
            "A");  // C3 followed by ASCII is ill-formed
  EXPECT_EQ(d.Push(0xFF), "\xEF\xBF\xBD");
  EXPECT_EQ(d.Push(0xE6), "");
  EXPECT_EQ(d.Push(0x97), "");
  EXPECT_EQ(d.Flush(), "\xEF\xBF\xBD");  // truncated at the end of the stream
  EXPECT_EQ(d.num_pending_bytes(), 0u);
}

TEST_F(Detokenizer, ConcatenationMatchesSanitizedDecode) {
  const std::vector<int32_t> ids = {0xE6, 0x97, 0xA5, ' ', 0x80, 0xC3, 0xA9, 0xF0, 0x9F};
  IncrementalDetokenizer d(tokenizer_.get());
  std::string streamed;
  for (int32_t id : ids) {
    const std::string piece = d.Push(id);
    EXPECT_TRUE(IsValidUtf8(piece));
    streamed += piece;
  }
  streamed += d.Flush();
  EXPECT_EQ(streamed, SanitizeUtf8(tokenizer_->Decode(ids)));
}

}  // namespace
}  // namespace ds::text
