#include "apps/test_models.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>

#include "apps/default_vocab.h"
#include "base/check.h"
#include "tensor/dtype.h"

namespace ds::apps {

ModelConfig TinyConfig(const std::string& arch) {
  ModelConfig c;
  c.arch = arch;
  c.n_embd = 64;
  c.n_layer = 4;
  c.n_head = 4;
  c.n_head_kv = 2;
  c.head_dim = 16;
  c.n_ff = 96;
  c.n_ctx = 1024;
  c.ssm_state_size = 16;
  c.ssm_group_count = 2;
  c.ssm_time_step_rank = 4;
  c.n_expert = 4;
  c.n_expert_used = 2;
  c.n_ff_expert = 32;
  c.n_ff_shared_expert = 48;
  c.seed = 11;
  return c;
}

ModelConfig TinyKQuantConfig(const std::string& arch, tensor::DType dtype) {
  ModelConfig c = TinyConfig(arch);
  c.n_embd = 256;
  c.dtype = dtype;
  return c;
}

ModelConfig TestConfig(const std::string& name) {
  const size_t slash = name.find('/');
  if (slash == std::string::npos) return TinyConfig(name);
  const std::string variant = name.substr(slash + 1);
  if (variant == "many_experts") {
    // A router of 288 x 64 floats (72 KiB): more than a decode step multiplies on the calling
    // thread, so one token takes the router's own parallel pass as a prompt does.
    ModelConfig c = TinyConfig(name.substr(0, slash));
    c.n_expert = 288;
    c.n_expert_used = 4;
    return c;
  }
  const std::optional<tensor::DType> dtype = tensor::ParseDType(variant);
  DS_CHECK_MSG(dtype == tensor::DType::kQ4_K || dtype == tensor::DType::kQ5_K ||
                   dtype == tensor::DType::kQ6_K,
               "test configs name an arch, arch/q4_K, arch/q5_K, arch/q6_K or arch/many_experts");
  return TinyKQuantConfig(name.substr(0, slash), *dtype);
}

std::unique_ptr<TestModel> BuildTestModel(const ModelConfig& config) {
  auto test_model = std::make_unique<TestModel>();
  StatusOr<gguf::Writer> writer = MakeModel(config, MakeDefaultVocab(200));
  DS_CHECK_MSG(writer.ok(), writer.status().ToString().c_str());
  test_model->bytes = writer->Serialize();
  test_model->loaded_bytes = test_model->bytes;
  auto file = gguf::File::FromWritableBuffer(test_model->loaded_bytes, config.arch + "-test");
  DS_CHECK_MSG(file.ok(), file.status().ToString().c_str());
  test_model->file = std::move(file).value();
  auto model = model::Model::Load(*test_model->file);
  DS_CHECK_MSG(model.ok(), model.status().ToString().c_str());
  test_model->model = std::move(model).value();
  return test_model;
}

std::vector<int32_t> RandomPrompt(int64_t n, int64_t n_vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> ids(n);
  for (auto& id : ids) id = static_cast<int32_t>(rng() % n_vocab);
  return ids;
}

std::vector<float> Prefill(model::Model& m, state::SequenceState* s,
                           const std::vector<int32_t>& ids, int64_t begin, int64_t end,
                           int64_t split, ThreadPool* pool) {
  std::vector<float> logits(m.hparams().n_vocab);
  for (int64_t b = begin; b < end; b += split) {
    const int64_t n = std::min(split, end - b);
    Status st = m.Forward(std::span<const int32_t>(ids).subspan(b, n), s,
                          model::LogitsMode::kLast, logits.data(), pool);
    EXPECT_TRUE(st.ok()) << st.ToString();
  }
  return logits;
}

double MaxRelativeError(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double diff = 0, scale = 1e-30;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::fabs(a[i] - b[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(b[i])));
  }
  return diff / scale;
}

}  // namespace ds::apps
