#include "text/tokenizer.h"

#include <gtest/gtest.h>

#include <chrono>

#include "text/pretokenizer.h"
#include "text/test_vocabs.h"

namespace ds::text {
namespace {

using testing::IdOf;
using testing::TinyBpeVocab;
using testing::TinySpmVocab;

std::unique_ptr<Tokenizer> Make(Vocab vocab) {
  auto t = Tokenizer::FromVocab(std::move(vocab));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? std::move(t).value() : nullptr;
}

std::vector<std::string> Split(std::string_view pre, std::string_view text) {
  auto p = PreTokenizer::Create(pre);
  EXPECT_TRUE(p.ok());
  return (*p)->Split(text);
}

TEST(PreTokenizer, Qwen2Words) {
  EXPECT_EQ(Split("qwen2", "Hello, y'all!\n\n  x 123"),
            (std::vector<std::string>{"Hello", ",", " y", "'all", "!\n\n", " ", " x", " ", "1", "2",
                                      "3"}));
  // llama3 groups digits by three; gpt-2 keeps one space before a word.
  EXPECT_EQ(Split("llama-bpe", "12345"), (std::vector<std::string>{"123", "45"}));
  EXPECT_EQ(Split("gpt-2", "a  b"), (std::vector<std::string>{"a", " ", " b"}));
  // qwen35 keeps combining marks with their letters; qwen2 does not.
  EXPECT_EQ(Split("qwen35", "e\xCC\x81t\xC3\xA9"),
            (std::vector<std::string>{"e\xCC\x81t\xC3\xA9"}));
  EXPECT_EQ(Split("qwen2", "e\xCC\x81t"), (std::vector<std::string>{"e", "\xCC\x81t"}));
}

TEST(PreTokenizer, DeepseekCoderAppliesRegexesInSequence) {
  EXPECT_EQ(Split("deepseek-coder", "ab, 12\n"),
            (std::vector<std::string>{"ab", ",", " ", "1", "2", "\n"}));
}

// Long runs must not hit regex engine limits (which would silently merge pieces).
TEST(PreTokenizer, LongWhitespaceRuns) {
  const std::string spaces(100000, ' ');
  EXPECT_EQ(Split("qwen2", spaces + "x"), (std::vector<std::string>{spaces.substr(1), " x"}));
  std::string mixed;
  for (int i = 0; i < 20000; ++i) mixed += " \t\n";
  mixed += "y";
  EXPECT_EQ(Split("qwen2", mixed), (std::vector<std::string>{mixed.substr(0, 60000), "y"}));
  EXPECT_EQ(Split("llama-bpe", spaces), (std::vector<std::string>{spaces}));
  EXPECT_EQ(Split("gpt-2", spaces + "x").size(), 2u);
}

TEST(PreTokenizer, UnknownNameIsUnimplemented) {
  EXPECT_EQ(PreTokenizer::Create("no-such-pre").status().code(), StatusCode::kUnimplemented);
}

TEST(PreTokenizer, IllFormedBytesReadAsReplacementCharacter) {
  EXPECT_EQ(Split("qwen2", "a\xFF"), (std::vector<std::string>{"a", "\xEF\xBF\xBD"}));
}

TEST(BpeTokenizer, LowestRankMergesFirst) {
  // "abc": rank 0 is "b c", so "a b" never applies; "a bc" is not a merge.
  auto t = Make(TinyBpeVocab({"ab", "bc"}, {"b c", "a b"}));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->Encode("abc", false, false), (std::vector<int32_t>{'a', 257}));
  EXPECT_EQ(t->Encode("abab", false, false), (std::vector<int32_t>{256, 256}));
  EXPECT_EQ(t->Decode(t->Encode("a\xC3\xA9 b\n", false, false)), "a\xC3\xA9 b\n");
}

TEST(BpeTokenizer, SpecialTokensLongestFirst) {
  auto v = TinyBpeVocab({}, {},
                        {{"<|im|>", TokenType::kControl},
                         {"<|im|>x", TokenType::kControl},
                         {"<tool>", TokenType::kUserDefined}});
  const int32_t im = IdOf(v, "<|im|>"), imx = IdOf(v, "<|im|>x"), tool = IdOf(v, "<tool>");
  auto t = Make(v);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->Encode("<|im|>x<|im|>", false, true), (std::vector<int32_t>{imx, im}));
  // Without parse_special control tokens are plain text; user-defined ones are still matched.
  const std::vector<int32_t> plain = t->Encode("<|im|><tool>", false, false);
  ASSERT_FALSE(plain.empty());
  EXPECT_EQ(plain.back(), tool);
  EXPECT_EQ(plain.size(), 7u);
  EXPECT_EQ(t->TokenToPiece(im), "");
  EXPECT_EQ(t->TokenToPiece(im, true), "<|im|>");
  EXPECT_EQ(t->TokenToPiece(tool), "<tool>");
}

TEST(BpeTokenizer, EndOfGenerationFromText) {
  auto v = TinyBpeVocab({}, {},
                        {{"<|endoftext|>", TokenType::kNormal},
                         {"<|im_end|>", TokenType::kControl},
                         {"<|fim_pad|>", TokenType::kUserDefined}});
  v.eos_id = IdOf(v, "<|im_end|>");
  auto t = Make(v);
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(t->IsEog(IdOf(v, "<|endoftext|>")));
  EXPECT_TRUE(t->IsEog(IdOf(v, "<|fim_pad|>")));
  EXPECT_TRUE(t->IsEog(v.eos_id));
  EXPECT_FALSE(t->IsEog('a'));
  // Recognised end tokens become control tokens, as llama.cpp does at load time.
  EXPECT_TRUE(t->IsControl(IdOf(v, "<|endoftext|>")));
}

TEST(BpeTokenizer, AddSpecialHonoursAddBosAndAddEos) {
  auto v = TinyBpeVocab({}, {}, {{"<s>", TokenType::kControl}, {"</s>", TokenType::kControl}});
  v.bos_id = IdOf(v, "<s>");
  v.eos_id = IdOf(v, "</s>");
  v.add_bos = true;
  v.add_eos = true;
  auto t = Make(v);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->Encode("a", true, false), (std::vector<int32_t>{v.bos_id, 'a', v.eos_id}));
  EXPECT_EQ(t->Encode("a", false, false), (std::vector<int32_t>{'a'}));
}

TEST(SpmTokenizer, ScoresSpacePrefixAndByteFallback) {
  auto v = TinySpmVocab({{"\xE2\x96\x81", -1},
                         {"a", -2},
                         {"b", -2},
                         {"\xE2\x96\x81"
                          "a",
                          -3},
                         {"ab", -0.5f},
                         {"\xE2\x96\x81"
                          "ab",
                          -0.1f}});
  const int32_t sp_ab = IdOf(v,
                             "\xE2\x96\x81"
                             "ab"),
                sp = IdOf(v, "\xE2\x96\x81");
  auto t = Make(v);
  ASSERT_NE(t, nullptr);
  // " ab": "ab" (-0.5) beats "▁a" (-3), then "▁ab".
  EXPECT_EQ(t->Encode("ab", true, false), (std::vector<int32_t>{1, sp_ab}));
  // é is not a piece: its two bytes fall back to <0xC3> <0xA9> (ids 3 + byte).
  EXPECT_EQ(t->Encode("\xC3\xA9", false, false), (std::vector<int32_t>{sp, 3 + 0xC3, 3 + 0xA9}));
  EXPECT_EQ(t->Decode(t->Encode("ab ab", false, false)), " ab ab");
  // After a special token the next text gets the space prefix again.
  EXPECT_EQ(t->Encode("<s>ab", false, true), (std::vector<int32_t>{1, sp_ab}));
  EXPECT_EQ(t->TokenToPiece(3 + 'A'), "A");
}

TEST(Tokenizer, RejectsBrokenVocabs) {
  Vocab v = TinyBpeVocab({}, {});
  v.tokens.push_back("a");  // duplicate of byte token 'a'
  v.token_types.push_back(TokenType::kNormal);
  EXPECT_EQ(Tokenizer::FromVocab(v).status().code(), StatusCode::kInvalidArgument);
  Vocab w = TinyBpeVocab({}, {});
  w.pre = "no-such-pre";
  EXPECT_EQ(Tokenizer::FromVocab(w).status().code(), StatusCode::kUnimplemented);
  Vocab x = TinyBpeVocab({}, {});
  x.add_bos = true;
  EXPECT_FALSE(Tokenizer::FromVocab(x).ok());
}

// 100 KB in one word is the worst case for merging; quadratic merging would take minutes.
TEST(Tokenizer, LongInputsStayFast) {
  std::vector<std::string> extra = {"aa", "aaaa", "aaaaaaaa"};
  auto t = Make(TinyBpeVocab(extra, {"a a", "aa aa", "aaaa aaaa"}));
  ASSERT_NE(t, nullptr);
  const auto start = std::chrono::steady_clock::now();
  const std::vector<int32_t> ids = t->Encode(std::string(100000, 'a'), false, false);
  std::string mixed;
  while (mixed.size() < 100000) mixed += "The quick brown fox, 12345 times!\n  \xE6\x97\xA5 ";
  const std::vector<int32_t> mixed_ids = t->Encode(mixed, false, false);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(ids.size(), 100000u / 8);
  EXPECT_EQ(t->Decode(mixed_ids), mixed);
  EXPECT_LT(seconds, 5.0);
}

}  // namespace
}  // namespace ds::text
