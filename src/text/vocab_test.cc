#include "text/vocab.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "text/test_vocabs.h"

namespace ds::text {
namespace {

using gguf::Value;
using gguf::ValueType;

struct Parsed {
  std::vector<uint8_t> bytes;
  std::unique_ptr<gguf::File> file;
};

Parsed Parse(const gguf::Writer& writer) {
  Parsed p;
  p.bytes = writer.Serialize();
  auto file = gguf::File::FromBuffer(p.bytes, "test");
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  if (file.ok()) p.file = std::move(file).value();
  return p;
}

std::vector<Value> Strings(const std::vector<std::string>& s) {
  std::vector<Value> out;
  for (const std::string& x : s) out.push_back(Value::Str(x));
  return out;
}

TEST(Vocab, WriteThenLoadRoundTrips) {
  Vocab v =
      testing::TinySpmVocab({{"\xE2\x96\x81"
                              "a",
                              -1.5f}});
  v.eot_id = 2;
  v.pad_id = 0;
  v.add_eos = true;
  v.normalizer = "nfc";
  v.chat_template = "{{ messages }}";
  gguf::Writer writer;
  WriteVocab(v, &writer);
  Parsed p = Parse(writer);
  ASSERT_NE(p.file, nullptr);
  auto loaded = LoadVocab(*p.file);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->model, v.model);
  EXPECT_EQ(loaded->tokens, v.tokens);
  EXPECT_EQ(loaded->scores, v.scores);
  EXPECT_EQ(loaded->token_types, v.token_types);
  EXPECT_EQ(loaded->bos_id, 1);
  EXPECT_EQ(loaded->eos_id, 2);
  EXPECT_EQ(loaded->eot_id, 2);
  EXPECT_EQ(loaded->pad_id, 0);
  EXPECT_EQ(loaded->unk_id, 0);
  EXPECT_TRUE(loaded->add_bos);
  EXPECT_TRUE(loaded->add_eos);
  EXPECT_TRUE(loaded->add_space_prefix);
  EXPECT_EQ(loaded->normalizer, "nfc");
  EXPECT_EQ(loaded->chat_template, v.chat_template);

  Vocab b = testing::TinyBpeVocab({"ab"}, {"a b"});
  b.pre = "qwen2";
  b.eos_id = 256;
  gguf::Writer bpe_writer;
  WriteVocab(b, &bpe_writer);
  Parsed q = Parse(bpe_writer);
  auto bpe = LoadVocab(*q.file);
  ASSERT_TRUE(bpe.ok()) << bpe.status().ToString();
  EXPECT_EQ(bpe->pre, "qwen2");
  EXPECT_EQ(bpe->merges, b.merges);
  EXPECT_EQ(bpe->eos_id, 256);
  EXPECT_TRUE(bpe->scores.empty());
}

TEST(Vocab, LlamaCppDefaultsForAbsentKeys) {
  gguf::Writer writer;
  writer.Set("tokenizer.ggml.model", Value::Str("gpt2"));
  std::vector<std::string> tokens;
  for (int i = 0; i < 20; ++i) tokens.push_back(std::to_string(i));
  writer.Set("tokenizer.ggml.tokens", Value::Arr(ValueType::kString, Strings(tokens)));
  writer.Set("tokenizer.ggml.merges", Value::Arr(ValueType::kString, {}));
  writer.Set("tokenizer.ggml.padding_token_id", Value::U32(0xFFFFFFFFu));  // out of range: ignored
  Parsed p = Parse(writer);
  auto v = LoadVocab(*p.file);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->bos_id, 11);
  EXPECT_EQ(v->eos_id, 11);
  EXPECT_EQ(v->pad_id, -1);
  EXPECT_FALSE(v->add_bos);
  EXPECT_EQ(v->token_types, std::vector<TokenType>(20, TokenType::kNormal));
}

Status LoadError(const gguf::Writer& writer) {
  Parsed p = Parse(writer);
  if (p.file == nullptr) return InternalError("unparsable");
  return LoadVocab(*p.file).status();
}

TEST(Vocab, ErrorsNameTheKey) {
  gguf::Writer none;
  none.Set("general.name", Value::Str("x"));
  Status s = LoadError(none);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("tokenizer.ggml.model"), std::string::npos);

  gguf::Writer no_tokens;
  no_tokens.Set("tokenizer.ggml.model", Value::Str("llama"));
  s = LoadError(no_tokens);
  EXPECT_NE(s.message().find("tokenizer.ggml.tokens"), std::string::npos);

  gguf::Writer no_merges;
  no_merges.Set("tokenizer.ggml.model", Value::Str("gpt2"));
  no_merges.Set("tokenizer.ggml.tokens", Value::Arr(ValueType::kString, Strings({"a"})));
  s = LoadError(no_merges);
  EXPECT_NE(s.message().find("tokenizer.ggml.merges"), std::string::npos);

  gguf::Writer bad_type;
  bad_type.Set("tokenizer.ggml.model", Value::Str("llama"));
  bad_type.Set("tokenizer.ggml.tokens", Value::Arr(ValueType::kInt32, {Value::I32(1)}));
  s = LoadError(bad_type);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("tokenizer.ggml.tokens"), std::string::npos);

  gguf::Writer short_scores;
  short_scores.Set("tokenizer.ggml.model", Value::Str("llama"));
  short_scores.Set("tokenizer.ggml.tokens", Value::Arr(ValueType::kString, Strings({"a", "b"})));
  short_scores.Set("tokenizer.ggml.scores", Value::Arr(ValueType::kFloat32, {Value::F32(0)}));
  s = LoadError(short_scores);
  EXPECT_NE(s.message().find("tokenizer.ggml.scores"), std::string::npos);

  gguf::Writer unknown_model;
  unknown_model.Set("tokenizer.ggml.model", Value::Str("bert"));
  unknown_model.Set("tokenizer.ggml.tokens", Value::Arr(ValueType::kString, Strings({"a"})));
  s = LoadError(unknown_model);
  EXPECT_NE(s.message().find("bert"), std::string::npos);
}

class HfImport : public ::testing::Test {
 protected:
  void SetUp() override {
    // One directory per process: CTest runs the cases of this suite in parallel processes.
    dir_ = std::filesystem::temp_directory_path() / ("ds_text_hf_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::filesystem::path dir_;
};

constexpr char kTinyTokenizerJson[] = R"({
  "normalizer": {"type": "NFC"},
  "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
    {"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|)"
    R"([^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|)"
    R"(\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
    {"type": "ByteLevel", "use_regex": false}]},
  "decoder": {"type": "ByteLevel"},
  "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]},
  "added_tokens": [
    {"id": 3, "content": "<|end|>", "special": true},
    {"id": 4, "content": "<|fim_pad|>", "special": false},
    {"id": 5, "content": "<think>", "special": false},
    {"id": 7, "content": "<x>", "special": true}]
})";

TEST_F(HfImport, TypesIdsAndConfig) {
  const std::string json = Write("tokenizer.json", kTinyTokenizerJson);
  const std::string config = Write("tokenizer_config.json",
                                   R"({"eos_token": "<|end|>", "bos_token": null,
                                       "add_bos_token": false, "chat_template": "T"})");
  auto v = ImportHfTokenizer(json, config);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->model, "gpt2");
  EXPECT_EQ(v->pre, "qwen2");
  EXPECT_EQ(v->normalizer, "nfc");
  EXPECT_EQ(v->tokens, (std::vector<std::string>{"a", "b", "ab", "<|end|>", "<|fim_pad|>",
                                                 "<think>", "[PAD6]", "<x>"}));
  const std::vector<TokenType> types = {
      TokenType::kNormal,  TokenType::kNormal,      TokenType::kNormal, TokenType::kControl,
      TokenType::kControl, TokenType::kUserDefined, TokenType::kUnused, TokenType::kControl};
  EXPECT_EQ(v->token_types, types);
  EXPECT_EQ(v->merges, std::vector<std::string>{"a b"});
  EXPECT_EQ(v->eos_id, 3);
  EXPECT_EQ(v->bos_id, -1);
  EXPECT_EQ(v->chat_template, "T");
}

TEST_F(HfImport, Errors) {
  EXPECT_EQ(ImportHfTokenizer((dir_ / "missing.json").string(), "").status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(ImportHfTokenizer(Write("bad.json", "{not json"), "").status().code(),
            StatusCode::kInvalidArgument);
  std::string unigram = kTinyTokenizerJson;
  unigram.replace(unigram.find("\"BPE\""), 5, "\"Unigram\"");
  EXPECT_EQ(ImportHfTokenizer(Write("u.json", unigram), "").status().code(),
            StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace ds::text
