// Token ids must equal llama.cpp's (test-tokenizer-0 vectors, llama-tokenize references of the
// test models) and the golden Hugging Face tokenisations of the real Qwen3 tokenizer.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "text/detokenizer.h"
#include "text/tokenizer.h"
#include "text/unicode.h"
#include "text/vocab.h"

namespace ds::text {
namespace {

using Json = nlohmann::json;

std::string SharedDir() {
  const char* env = std::getenv("DS_SHARED_DIR");
  return env != nullptr ? env : "../shared";
}

#define SKIP_WITHOUT_SHARED_DATA()                                                      \
  if (!std::filesystem::exists(SharedDir() + "/testdata/tokenizers")) {                 \
    GTEST_SKIP() << "shared test data not found at " << SharedDir()                     \
                 << " (set DS_SHARED_DIR to the folder holding testdata/ and models/)"; \
  }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::unique_ptr<Tokenizer> TokenizerFromGguf(const std::string& path) {
  auto file = gguf::File::Open(path);
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  if (!file.ok()) return nullptr;
  auto vocab = LoadVocab(**file);
  EXPECT_TRUE(vocab.ok()) << vocab.status().ToString();
  if (!vocab.ok()) return nullptr;
  auto tokenizer = Tokenizer::FromVocab(std::move(vocab).value());
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  return tokenizer.ok() ? std::move(tokenizer).value() : nullptr;
}

// Imports the Qwen3 tokenizer.json, writes it into an in-memory GGUF, reads it back: the path
// make-model and the server take together. Built once; the import takes about a second.
const Tokenizer* Qwen3() {
  static const std::unique_ptr<Tokenizer> tokenizer = [] {
    const std::string dir = SharedDir() + "/testdata/tokenizers/qwen3/";
    auto vocab = ImportHfTokenizer(dir + "tokenizer.json", dir + "tokenizer_config.json");
    EXPECT_TRUE(vocab.ok()) << vocab.status().ToString();
    if (!vocab.ok()) return std::unique_ptr<Tokenizer>();
    gguf::Writer writer;
    WriteVocab(*vocab, &writer);
    static const std::vector<uint8_t> bytes = writer.Serialize();
    auto file = gguf::File::FromBuffer(bytes, "qwen3-vocab");
    EXPECT_TRUE(file.ok()) << file.status().ToString();
    auto loaded = LoadVocab(**file);
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    auto t = Tokenizer::FromVocab(std::move(loaded).value());
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? std::move(t).value() : std::unique_ptr<Tokenizer>();
  }();
  return tokenizer.get();
}

std::string Hex(std::string_view bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

// test-tokenizer-0 format: inputs each followed by "\n__ggml_vocab_test__\n"; one line of ids
// (space separated) per input in the .out file.
void CheckLlamaCppVectors(const Tokenizer& tokenizer, const std::string& base) {
  const std::string inputs = ReadFile(base + ".inp");
  std::istringstream outputs(ReadFile(base + ".out"));
  const std::string marker = "\n__ggml_vocab_test__\n";
  size_t pos = 0, num_cases = 0;
  for (size_t hit; (hit = inputs.find(marker, pos)) != std::string::npos;
       pos = hit + marker.size()) {
    const std::string text = inputs.substr(pos, hit - pos);
    std::string line;
    ASSERT_TRUE(std::getline(outputs, line)) << "missing ids for case " << num_cases;
    std::vector<int32_t> expected;
    std::istringstream ids(line);
    for (int32_t id; ids >> id;) expected.push_back(id);
    EXPECT_EQ(tokenizer.Encode(text, /*add_special=*/false, /*parse_special=*/false), expected)
        << base << " case " << num_cases << ": '" << text << "'";
    ++num_cases;
  }
  EXPECT_GE(num_cases, 40u) << base;
}

TEST(LlamaCppVocab, Gpt2) {
  SKIP_WITHOUT_SHARED_DATA();
  const std::string base =
      SharedDir() + "/testdata/tokenizers/llamacpp-vocab/ggml-vocab-gpt-2.gguf";
  auto tokenizer = TokenizerFromGguf(base);
  ASSERT_NE(tokenizer, nullptr);
  CheckLlamaCppVectors(*tokenizer, base);
}

TEST(LlamaCppVocab, LlamaSpm) {
  SKIP_WITHOUT_SHARED_DATA();
  const std::string base =
      SharedDir() + "/testdata/tokenizers/llamacpp-vocab/ggml-vocab-llama-spm.gguf";
  auto tokenizer = TokenizerFromGguf(base);
  ASSERT_NE(tokenizer, nullptr);
  CheckLlamaCppVectors(*tokenizer, base);
}

TEST(LlamaCppVocab, DeepseekCoder) {
  SKIP_WITHOUT_SHARED_DATA();
  const std::string base =
      SharedDir() + "/testdata/tokenizers/llamacpp-vocab/ggml-vocab-deepseek-coder.gguf";
  auto tokenizer = TokenizerFromGguf(base);
  ASSERT_NE(tokenizer, nullptr);
  CheckLlamaCppVectors(*tokenizer, base);
}

TEST(LlamaCppVocab, Qwen2FromImportedQwen3Tokenizer) {
  SKIP_WITHOUT_SHARED_DATA();
  ASSERT_NE(Qwen3(), nullptr);
  EXPECT_EQ(Qwen3()->vocab().pre, "qwen2");
  CheckLlamaCppVectors(*Qwen3(),
                       SharedDir() + "/testdata/tokenizers/llamacpp-vocab/ggml-vocab-qwen2.gguf");
}

TEST(Qwen3Golden, AllVectors) {
  SKIP_WITHOUT_SHARED_DATA();
  ASSERT_NE(Qwen3(), nullptr);
  std::istringstream lines(
      ReadFile(SharedDir() + "/testdata/tokenizers/qwen3/golden_vectors.jsonl"));
  int num_cases = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    const Json c = Json::parse(line);
    const std::string text = c["text"];
    const auto expected = c["ids"].get<std::vector<int32_t>>();
    EXPECT_EQ(Qwen3()->Encode(text, /*add_special=*/true, /*parse_special=*/true), expected)
        << "case " << num_cases << ": '" << text << "'";
    if (c["decoded_equal"].get<bool>()) {
      EXPECT_EQ(Qwen3()->Decode(expected, /*render_special=*/true), text) << "case " << num_cases;
    }
    ++num_cases;
  }
  EXPECT_EQ(num_cases, 70);
}

// 100 KB of mixed prose, code, CJK and emoji through the real 151k vocabulary.
TEST(Qwen3Golden, HundredKilobytesIsFast) {
  SKIP_WITHOUT_SHARED_DATA();
  ASSERT_NE(Qwen3(), nullptr);
  std::string text;
  while (text.size() < 100000) {
    text +=
        "The quick brown fox jumps over the lazy dog. def f(x):\n    return x**2\n"
        "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E \xF0\x9F\xA6\x99 12345678 <|im_end|>\n\n  ";
  }
  const auto start = std::chrono::steady_clock::now();
  const std::vector<int32_t> ids = Qwen3()->Encode(text, true, true);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(Qwen3()->Decode(ids, /*render_special=*/true), text);
  EXPECT_LT(seconds, 5.0);
}

TEST(Qwen3Golden, SpecialTokensAndEog) {
  SKIP_WITHOUT_SHARED_DATA();
  const Tokenizer* t = Qwen3();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->vocab().eos_id, t->FindToken("<|im_end|>"));
  EXPECT_FALSE(t->vocab().add_bos);
  EXPECT_NE(t->vocab().chat_template.find("<|im_start|>"), std::string::npos);
  const std::vector<int32_t> eog = {151643, 151645, 151662, 151663, 151664};
  EXPECT_EQ(t->eog_ids(), eog);
  EXPECT_TRUE(t->IsControl(t->FindToken("<|fim_prefix|>")));
  EXPECT_FALSE(t->IsControl(t->FindToken("<think>")));
  EXPECT_EQ(t->TokenToPiece(t->FindToken("<think>")), "<think>");
  EXPECT_EQ(t->TokenToPiece(t->FindToken("<|im_end|>")), "");
  EXPECT_EQ(t->TokenToPiece(t->FindToken("<|im_end|>"), true), "<|im_end|>");
  // <think> is user-defined: split out even when special tokens are not parsed.
  EXPECT_EQ(t->Encode("<think>", true, false), std::vector<int32_t>{151667});
  EXPECT_NE(t->Encode("<|im_end|>", true, false).size(), 1u);
}

// The recorded models: llama-tokenize ids with and without special-token parsing, their EOG
// sets, and the generated pieces' bytes.
void CheckRefs(const std::string& model_path) {
  auto tokenizer = TokenizerFromGguf(model_path);
  ASSERT_NE(tokenizer, nullptr);
  const std::string refs_path = model_path.substr(0, model_path.size() - 5) + ".refs.json";
  const Json refs = Json::parse(ReadFile(refs_path));
  const Json& config = refs["config"];
  EXPECT_EQ(tokenizer->eog_ids(), config["eog_ids"].get<std::vector<int32_t>>());
  EXPECT_EQ(tokenizer->vocab().bos_id, config["bos_id"].get<int32_t>());
  EXPECT_EQ(tokenizer->vocab().eos_id, config["eos_id"].get<int32_t>());
  EXPECT_EQ(tokenizer->vocab().add_bos, config["add_bos"].get<bool>());
  int num_cases = 0;
  for (const Json& c : refs["tokenizer_tests"]["cases"]) {
    const std::string text = c["text"];
    EXPECT_EQ(tokenizer->Encode(text, true, true), c["ids"].get<std::vector<int32_t>>())
        << refs_path << ": '" << text << "'";
    EXPECT_EQ(tokenizer->Encode(text, true, false),
              c["ids_no_parse_special"].get<std::vector<int32_t>>())
        << refs_path << " (no parse_special): '" << text << "'";
    ++num_cases;
  }
  EXPECT_EQ(num_cases, 20);
  for (const Json& prompt : refs["prompts"]) {
    if (prompt.contains("text")) {
      EXPECT_EQ(tokenizer->Encode(prompt["text"].get<std::string>(), true, true),
                prompt["prompt_ids"].get<std::vector<int32_t>>())
          << refs_path << " prompt " << prompt["name"];
    }
    const auto ids = prompt["generated_ids"].get<std::vector<int32_t>>();
    const auto hex = prompt["generated_pieces_hex"].get<std::vector<std::string>>();
    ASSERT_EQ(ids.size(), hex.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      EXPECT_EQ(Hex(tokenizer->TokenToPiece(ids[i])), hex[i]) << refs_path << " id " << ids[i];
    }
  }
}

TEST(ModelRefs, Stories260K) {
  SKIP_WITHOUT_SHARED_DATA();
  CheckRefs(SharedDir() + "/models/stories260K.gguf");
}

TEST(ModelRefs, Qwen35) {
  SKIP_WITHOUT_SHARED_DATA();
  CheckRefs(SharedDir() + "/testdata/hybrid/qwen35-pub.gguf");
}

TEST(ModelRefs, Qwen35Moe) {
  SKIP_WITHOUT_SHARED_DATA();
  CheckRefs(SharedDir() + "/testdata/hybrid/qwen35moe-pub.gguf");
}

TEST(ModelRefs, Qwen3Next) {
  SKIP_WITHOUT_SHARED_DATA();
  CheckRefs(SharedDir() + "/testdata/hybrid/qwen3next-pub.gguf");
}

TEST(IncrementalDetokenizer, MultiByteTextOneTokenAtATime) {
  SKIP_WITHOUT_SHARED_DATA();
  ASSERT_NE(Qwen3(), nullptr);
  const std::string text =
      "日本語のテキストと한국어 텍스트 🦙🚀👍🏽 👨‍👩‍👧‍👦 កាន់តែពិសេស naïve café — "
      "“quotes”";
  const std::vector<int32_t> ids = Qwen3()->Encode(text, false, false);
  IncrementalDetokenizer detokenizer(Qwen3());
  std::string streamed;
  size_t num_held_back = 0;
  for (int32_t id : ids) {
    const std::string piece = detokenizer.Push(id);
    EXPECT_TRUE(IsValidUtf8(piece)) << "id " << id;
    if (detokenizer.num_pending_bytes() > 0) ++num_held_back;
    streamed += piece;
  }
  streamed += detokenizer.Flush();
  EXPECT_EQ(streamed, Qwen3()->Decode(ids));
  EXPECT_EQ(streamed, text);
  EXPECT_GT(num_held_back, 0u) << "the text should split characters across tokens";
}

}  // namespace
}  // namespace ds::text
