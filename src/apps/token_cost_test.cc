// The per-token cost every bench-model ratio is stated against, recomputed here from the tensor
// list by hand: routed experts count k of n, the embedding one row unless it is also the output.
#include "apps/token_cost.h"

#include <gtest/gtest.h>

#include <string>

#include "apps/test_models.h"

namespace ds::apps {
namespace {

struct Expected {
  double bytes = 0;
  double macs = 0;
};

Expected ByHand(const gguf::File& file, double expert_share, bool tied) {
  Expected e;
  for (const gguf::TensorInfo& info : file.tensors()) {
    const bool expert = info.name.find("_exps.") != std::string::npos;
    const double share = expert ? expert_share : 1.0;
    if (info.name == "token_embd.weight" && !tied) {
      e.bytes += static_cast<double>(info.size_bytes) / info.ne[1];
      continue;
    }
    e.bytes += share * static_cast<double>(info.size_bytes);
    if (info.ne.size() >= 2 && info.num_rows() > 1) e.macs += share * info.num_elements();
  }
  return e;
}

TEST(TokenCostTest, RoutedExpertsCountKOfNAndTheEmbeddingOneRow) {
  ModelConfig config = TinyConfig("qwen35moe");  // 4 experts, 2 used
  const std::unique_ptr<TestModel> moe = BuildTestModel(config);
  const TokenCost cost = ActiveCostPerToken(*moe->file, moe->model->hparams());
  const Expected want = ByHand(*moe->file, 0.5, false);
  EXPECT_DOUBLE_EQ(cost.weight_bytes, want.bytes);
  EXPECT_DOUBLE_EQ(cost.macs, want.macs);
  // Counting every expert would have given more.
  EXPECT_LT(cost.weight_bytes, ByHand(*moe->file, 1.0, false).bytes);
}

TEST(TokenCostTest, ATiedEmbeddingIsReadWholeAsTheOutputMatrix) {
  ModelConfig config = TinyConfig("llama");
  config.tied_output = true;
  const std::unique_ptr<TestModel> tied = BuildTestModel(config);
  const TokenCost cost = ActiveCostPerToken(*tied->file, tied->model->hparams());
  const Expected want = ByHand(*tied->file, 1.0, true);
  EXPECT_DOUBLE_EQ(cost.weight_bytes, want.bytes);
  EXPECT_DOUBLE_EQ(cost.macs, want.macs);
  config.tied_output = false;
  const std::unique_ptr<TestModel> untied = BuildTestModel(config);
  const TokenCost separate = ActiveCostPerToken(*untied->file, untied->model->hparams());
  EXPECT_DOUBLE_EQ(separate.weight_bytes, ByHand(*untied->file, 1.0, false).bytes);
}

}  // namespace
}  // namespace ds::apps
