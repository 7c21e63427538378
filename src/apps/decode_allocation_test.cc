// A decode step allocates nothing once its buffers have grown to size, for every architecture
// and KV format, and neither does sampling the next token: the engine runs both per token.

#include <gtest/gtest.h>

#include "apps/test_models.h"
#include "base/allocation_count.h"
#include "engine/generate.h"

namespace ds::apps {
namespace {

class DecodeAllocationTest
    : public ::testing::TestWithParam<
          std::tuple<std::string, std::pair<tensor::DType, tensor::DType>>> {};

TEST_P(DecodeAllocationTest, DecodeStepsAllocateNothing) {
  const auto& [arch, kv_dtypes] = GetParam();
  ModelConfig config = TinyConfig(arch);
  config.head_dim = 32;  // Q8_0 KV rows hold whole blocks per head
  std::unique_ptr<TestModel> tm = BuildTestModel(config);
  model::Model& m = *tm->model;
  state::StateLayout layout = m.StateLayoutFor(256);
  layout.k_dtype = kv_dtypes.first;
  layout.v_dtype = kv_dtypes.second;
  state::SequenceState s(layout);
  ThreadPool pool(2);
  const std::vector<int32_t> ids = RandomPrompt(40, m.hparams().n_vocab, 3);
  std::vector<float> logits(m.hparams().n_vocab);
  Prefill(m, &s, ids, 0, 30, 30, &pool);
  // The first steps size the per-thread buffers of every kernel.
  Prefill(m, &s, ids, 30, 32, 1, &pool);
  const int64_t before = AllocationsSoFar();
  for (int64_t t = 32; t < 40; ++t) {
    ASSERT_TRUE(m.Forward(std::span<const int32_t>(ids).subspan(t, 1), &s,
                          model::LogitsMode::kLast, logits.data(), &pool)
                    .ok());
  }
  EXPECT_EQ(AllocationsSoFar(), before) << arch;
}

TEST(GenerateAllocationTest, SamplingStepsAllocateNothing) {
  std::unique_ptr<TestModel> tm = BuildTestModel(TinyConfig("qwen35moe"));
  model::Model& m = *tm->model;
  state::SequenceState s(m.StateLayoutFor(256));
  ThreadPool pool(2);
  engine::GenerateOptions options;
  options.max_new_tokens = 24;
  options.sampling.repeat_penalty = 1.3f;
  options.sampling.presence_penalty = 0.5f;
  options.sampling.frequency_penalty = 0.2f;
  std::vector<int64_t> counts;
  counts.reserve(options.max_new_tokens);
  options.on_token = [&](int32_t) {
    counts.push_back(AllocationsSoFar());
    return true;
  };
  const std::vector<int32_t> prompt = RandomPrompt(20, m.hparams().n_vocab, 4);
  ASSERT_TRUE(engine::Generate(m, &s, prompt, options, &pool).ok());
  ASSERT_EQ(counts.size(), 24u);
  // From the third token on, every kernel's and the sampler's buffers have their size.
  for (size_t i = 3; i < counts.size(); ++i) EXPECT_EQ(counts[i], counts[2]) << "token " << i;
}

INSTANTIATE_TEST_SUITE_P(
    AllArchitectures, DecodeAllocationTest,
    ::testing::Combine(::testing::Values("qwen35moe", "qwen35", "qwen3next", "qwen3", "qwen2",
                                         "llama"),
                       ::testing::Values(std::pair{tensor::DType::kF32, tensor::DType::kF32},
                                         std::pair{tensor::DType::kQ8_0, tensor::DType::kQ8_0},
                                         std::pair{tensor::DType::kQ8_0, tensor::DType::kQ4_0})));

}  // namespace
}  // namespace ds::apps
