// The per-token cost every bench-model ratio is stated against, checked against the dense
// transformer's formula from its hyperparameters (not against the tensor walk it implements),
// and for a MoE model against the same model counted with every expert.
#include "apps/token_cost.h"

#include <gtest/gtest.h>

#include <string>

#include "apps/test_models.h"

namespace ds::apps {
namespace {

// Multiply-adds per token of a llama block stack plus the output matrix.
double DenseLlamaMacs(const model::HParams& hp) {
  const double q_dim = static_cast<double>(hp.n_head * hp.head_dim);
  const double kv_dim = static_cast<double>(hp.n_head_kv * hp.head_dim);
  const double per_layer = hp.n_embd * (2 * q_dim + 2 * kv_dim) + 3.0 * hp.n_embd * hp.n_ff;
  return hp.n_layer * per_layer + static_cast<double>(hp.n_vocab) * hp.n_embd;
}

TEST(TokenCostTest, DenseModelStreamsEveryMatrixOnceAndOneEmbeddingRow) {
  for (bool tied : {false, true}) {
    ModelConfig config = TinyConfig("llama");  // f32 weights
    config.tied_output = tied;
    const std::unique_ptr<TestModel> m = BuildTestModel(config);
    const model::HParams& hp = m->model->hparams();
    const TokenCost cost = ActiveCostPerToken(*m->file, hp);
    const double macs = DenseLlamaMacs(hp);
    EXPECT_DOUBLE_EQ(cost.macs, macs) << "tied " << tied;
    // Matrices stream 4 bytes per multiply-add; the norms (two per layer and the final one) are
    // vectors; an untied embedding adds the one row a token looks up.
    const double norms = (2.0 * hp.n_layer + 1) * hp.n_embd;
    const double embedding_row = tied ? 0.0 : static_cast<double>(hp.n_embd);
    EXPECT_DOUBLE_EQ(cost.weight_bytes, 4.0 * (macs + norms + embedding_row)) << "tied " << tied;
  }
}

TEST(TokenCostTest, RoutedExpertsCountKOfN) {
  ModelConfig config = TinyConfig("qwen35moe");  // 4 experts, 2 used
  const std::unique_ptr<TestModel> moe = BuildTestModel(config);
  const model::HParams& hp = moe->model->hparams();
  double expert_bytes = 0, expert_macs = 0;
  for (const gguf::TensorInfo& info : moe->file->tensors()) {
    if (info.name.find("_exps.") == std::string::npos) continue;
    expert_bytes += static_cast<double>(info.size_bytes);
    expert_macs += static_cast<double>(info.num_elements());
  }
  ASSERT_GT(expert_bytes, 0);
  model::HParams every_expert = hp;
  every_expert.n_expert_used = hp.n_expert;
  const TokenCost active = ActiveCostPerToken(*moe->file, hp);
  const TokenCost all = ActiveCostPerToken(*moe->file, every_expert);
  // Every expert minus the used ones: the unused share of the expert tensors.
  const double unused = 1.0 - static_cast<double>(hp.n_expert_used) / hp.n_expert;
  EXPECT_DOUBLE_EQ(all.weight_bytes - active.weight_bytes, unused * expert_bytes);
  EXPECT_DOUBLE_EQ(all.macs - active.macs, unused * expert_macs);
}

}  // namespace
}  // namespace ds::apps
