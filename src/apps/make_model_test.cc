// make-model writes files the way llama.cpp's converter does: the same hyperparameter keys and
// the same tensor names, shapes and types as the reference models in ../shared, made with the
// reference generator's config.
#include "apps/make_model.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "apps/default_vocab.h"
#include "apps/test_models.h"
#include "base/thread_pool.h"
#include "state/sequence_state.h"

namespace ds::apps {
namespace {

using nlohmann::json;

std::string SharedDir() {
  const char* env = std::getenv("DS_SHARED_DIR");
  return env != nullptr ? env : "../shared";
}

ModelConfig ConfigFromMetadata(const json& md, const std::string& arch) {
  ModelConfig c;
  const std::string p = arch + ".";
  c.arch = arch;
  c.n_embd = md[p + "embedding_length"];
  c.n_layer = md[p + "block_count"];
  c.n_head = md[p + "attention.head_count"];
  c.n_head_kv = md[p + "attention.head_count_kv"];
  c.head_dim = md[p + "attention.key_length"];
  c.n_rot = md[p + "rope.dimension_count"];
  c.n_ctx = md[p + "context_length"];
  c.rope_freq_base = md[p + "rope.freq_base"];
  c.ssm_state_size = md[p + "ssm.state_size"];
  c.ssm_group_count = md[p + "ssm.group_count"];
  c.ssm_time_step_rank = md[p + "ssm.time_step_rank"];
  c.ssm_conv_kernel = md[p + "ssm.conv_kernel"];
  c.full_attention_interval = md[p + "full_attention_interval"];
  if (md.contains(p + "feed_forward_length")) c.n_ff = md[p + "feed_forward_length"];
  if (md.contains(p + "expert_count")) {
    c.n_expert = md[p + "expert_count"];
    c.n_expert_used = md[p + "expert_used_count"];
    c.n_ff_expert = md[p + "expert_feed_forward_length"];
    c.n_ff_shared_expert = md[p + "expert_shared_feed_forward_length"];
  }
  return c;
}

void ExpectSameLayoutAsReference(const std::string& stem, tensor::DType dtype, bool tied) {
  std::ifstream in(SharedDir() + "/testdata/hybrid/" + stem + ".refs.json");
  if (!in) GTEST_SKIP() << "reference " << stem << " not found; set DS_SHARED_DIR";
  json refs = json::parse(in);
  const json& md = refs["config"]["gguf_metadata"];
  ModelConfig config = ConfigFromMetadata(md, md["general.architecture"]);
  config.dtype = dtype;
  config.tied_output = tied;
  text::Vocab vocab = MakeDefaultVocab(1700);
  auto writer = MakeModel(config, vocab);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  std::vector<uint8_t> bytes = writer->Serialize();
  auto file = gguf::File::FromBuffer(bytes, stem);
  ASSERT_TRUE(file.ok()) << file.status().ToString();

  using Entry = std::tuple<std::string, std::vector<int64_t>, std::string>;
  std::set<Entry> expected, actual;
  for (const json& t : refs["config"]["tensors"]) {
    std::vector<int64_t> ne = t["ne"];
    if (t["name"] == "token_embd.weight" || t["name"] == "output.weight") ne[1] = vocab.num_tokens();
    std::string type = t["type"];
    for (char& ch : type) ch = static_cast<char>(std::tolower(ch));
    expected.insert({t["name"], ne, type});
  }
  for (const gguf::TensorInfo& t : (*file)->tensors()) {
    std::string type(tensor::DTypeName(t.type));
    for (char& ch : type) ch = static_cast<char>(std::tolower(ch));
    actual.insert({t.name, t.ne, type});
  }
  EXPECT_EQ(actual, expected);

  for (const auto& [key, value] : md.items()) {
    if (key.rfind("tokenizer.", 0) == 0 || key == "general.name") continue;
    const gguf::Value* ours = (*file)->Find(key);
    ASSERT_NE(ours, nullptr) << "missing key " << key;
    if (value.is_number()) {
      auto as_double = std::visit(
          [](const auto& v) -> double {
            if constexpr (std::is_arithmetic_v<std::decay_t<decltype(v)>>) {
              return static_cast<double>(v);
            }
            return -1;
          },
          ours->data);
      EXPECT_NEAR(as_double, value.get<double>(), 1e-6 * std::fabs(value.get<double>())) << key;
    }
  }
  auto model = model::Model::Load(**file);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
}

TEST(MakeModelTest, Qwen35MoeMatchesReferenceLayout) {
  ExpectSameLayoutAsReference("qwen35moe-pub", tensor::DType::kF32, false);
}
TEST(MakeModelTest, Qwen35MatchesReferenceLayout) {
  ExpectSameLayoutAsReference("qwen35-pub", tensor::DType::kF16, true);
}
TEST(MakeModelTest, Qwen3NextMatchesReferenceLayout) {
  ExpectSameLayoutAsReference("qwen3next-pub", tensor::DType::kF32, false);
}

TEST(MakeModelTest, SameConfigSameBytes) {
  ModelConfig config = TinyConfig("qwen35moe");
  config.dtype = tensor::DType::kQ8_0;
  auto a = MakeModel(config, MakeDefaultVocab(100));
  auto b = MakeModel(config, MakeDefaultVocab(100));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->Serialize(), b->Serialize());
  config.seed++;
  auto c = MakeModel(config, MakeDefaultVocab(100));
  EXPECT_NE(a->Serialize(), c->Serialize());
}

TEST(MakeModelTest, EveryArchitectureLoadsInEveryWeightType) {
  for (const char* arch : {"llama", "qwen2", "qwen3", "qwen35", "qwen35moe", "qwen3next"}) {
    for (tensor::DType dtype : {tensor::DType::kF16, tensor::DType::kQ8_0, tensor::DType::kQ4_K}) {
      ModelConfig config = TinyConfig(arch);
      config.dtype = dtype;
      BuildTestModel(config);  // aborts with the error when the file does not load
    }
  }
}

TEST(MakeModelTest, ConfigJsonErrorsNameTheKey) {
  ModelConfig config;
  EXPECT_TRUE(ApplyConfigJson(R"({"n_embd": 128, "dtype": "q4_K", "arch": "qwen3"})", &config).ok());
  EXPECT_EQ(config.n_embd, 128);
  EXPECT_EQ(config.dtype, tensor::DType::kQ4_K);
  Status unknown = ApplyConfigJson(R"({"n_embed": 1})", &config);
  EXPECT_NE(unknown.message().find("n_embed"), std::string::npos);
  Status wrong_type = ApplyConfigJson(R"({"n_layer": "four"})", &config);
  EXPECT_NE(wrong_type.message().find("n_layer"), std::string::npos);
  EXPECT_FALSE(ApplyConfigJson("not json", &config).ok());
  config.arch = "gpt5";
  EXPECT_FALSE(MakeModel(config, MakeDefaultVocab(10)).ok());
}

// MTP blocks after the trunk and fused expert gate and up rows (K-quant, so the fused matrices
// are interleaved too) leave the trunk's weights, and so its logits, exactly as they were.
TEST(MakeModelTest, PublishedLayoutsGiveTheSameLogits) {
  for (const char* arch : {"qwen35", "qwen35moe", "qwen3next"}) {
    ModelConfig plain = TinyKQuantConfig(arch, tensor::DType::kQ4_K);
    ModelConfig published = plain;
    published.n_mtp = 1;
    published.mtp_own_head = std::string(arch) == "qwen35";
    published.fuse_gate_up_exps = std::string(arch) != "qwen35";
    auto a = BuildTestModel(plain);
    auto b = BuildTestModel(published);
    EXPECT_EQ(b->model->hparams().n_layer, plain.n_layer) << arch;
    EXPECT_EQ(b->model->hparams().n_nextn, 1) << arch;
    ThreadPool pool(2);
    const std::vector<int32_t> ids = RandomPrompt(40, a->model->hparams().n_vocab, 5);
    std::vector<std::vector<float>> logits;
    for (TestModel* m : {a.get(), b.get()}) {
      state::SequenceState state(m->model->StateLayoutFor(64));
      logits.push_back(Prefill(*m->model, &state, ids, 0, 40, 16, &pool));
    }
    EXPECT_EQ(logits[0], logits[1]) << arch;
  }
  ModelConfig dense = TinyConfig("qwen3");
  dense.n_mtp = 1;
  EXPECT_FALSE(MakeModel(dense, MakeDefaultVocab(10)).ok());
}

// What a loader sees when a file lacks a key or holds a tensor of the wrong shape.
Status LoadError(const std::function<void(gguf::Writer*)>& damage) {
  ModelConfig config = TinyConfig("qwen35moe");
  StatusOr<gguf::Writer> writer = MakeModel(config, MakeDefaultVocab(50));
  EXPECT_TRUE(writer.ok());
  damage(&*writer);
  std::vector<uint8_t> bytes = writer->Serialize();
  auto file = gguf::File::FromBuffer(bytes, "damaged.gguf");
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  if (!file.ok()) return file.status();
  auto model = model::Model::Load(**file);
  return model.ok() ? OkStatus() : model.status();
}

TEST(MakeModelTest, LoadErrorsNameTheKeyAndTheTensor) {
  EXPECT_TRUE(LoadError([](gguf::Writer*) {}).ok());
  Status missing = LoadError([](gguf::Writer* w) { w->Erase("qwen35moe.embedding_length"); });
  EXPECT_EQ(missing.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing.message().find("missing required key qwen35moe.embedding_length"),
            std::string::npos)
      << missing.message();
  Status ssm = LoadError([](gguf::Writer* w) { w->Erase("qwen35moe.ssm.state_size"); });
  EXPECT_NE(ssm.message().find("ssm.state_size is missing"), std::string::npos) << ssm.message();
  Status shape = LoadError([](gguf::Writer* w) {
    w->EraseTensor("blk.0.ssm_a");
    std::vector<uint8_t> data(3 * sizeof(float), 0);
    w->AddTensor("blk.0.ssm_a", {3}, tensor::DType::kF32, std::move(data));
  });
  EXPECT_NE(shape.message().find("tensor 'blk.0.ssm_a' has shape"), std::string::npos)
      << shape.message();
  Status absent = LoadError([](gguf::Writer* w) { w->EraseTensor("blk.1.attn_norm.weight"); });
  EXPECT_NE(absent.message().find("blk.1.attn_norm.weight"), std::string::npos)
      << absent.message();
}

std::vector<float> TensorValues(const gguf::File& file, const std::string& name) {
  const gguf::TensorInfo* info = file.FindTensor(name);
  EXPECT_NE(info, nullptr) << name;
  if (info == nullptr) return {};
  EXPECT_EQ(info->type, tensor::DType::kF32) << name;
  std::vector<float> values(info->num_elements());
  std::memcpy(values.data(), info->data, values.size() * sizeof(float));
  return values;
}

// llama.cpp's converter stores RMSNorm weights as (1 + w) and the decay as ssm_a = -exp(A_log);
// the engine reads them as stored. Checked on make-model's files and the reference models.
void ExpectConverterConventions(const gguf::File& file, int64_t n_layer) {
  for (int64_t layer = 0; layer < n_layer; ++layer) {
    const std::string p = "blk." + std::to_string(layer) + ".";
    std::vector<float> norm = TensorValues(file, p + "attn_norm.weight");
    double mean = 0;
    for (float v : norm) mean += v;
    mean /= static_cast<double>(norm.size());
    EXPECT_NEAR(mean, 1.0, 0.2) << p << "attn_norm: (1 + w), not w";
    if (file.FindTensor(p + "ssm_a") == nullptr) continue;
    for (float a : TensorValues(file, p + "ssm_a")) {
      EXPECT_LT(a, 0.0f) << p << "ssm_a = -exp(A_log), never A_log";
    }
  }
}

TEST(MakeModelTest, NormsAndDecayFollowTheConverter) {
  std::unique_ptr<TestModel> made = BuildTestModel(TinyConfig("qwen35moe"));
  ExpectConverterConventions(*made->file, TinyConfig("qwen35moe").n_layer);
  const std::string reference = SharedDir() + "/testdata/hybrid/qwen35moe-pub.gguf";
  if (!std::filesystem::exists(reference)) GTEST_SKIP() << reference << " not found";
  auto file = gguf::File::Open(reference);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  StatusOr<uint64_t> n_layer = (*file)->GetUint("qwen35moe.block_count");
  ASSERT_TRUE(n_layer.ok());
  ExpectConverterConventions(**file, static_cast<int64_t>(*n_layer));
}

}  // namespace
}  // namespace ds::apps
