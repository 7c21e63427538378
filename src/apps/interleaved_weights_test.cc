// A model whose file the process holds in writable memory reads its Q4_K, Q5_K and Q6_K matrices
// interleaved where the kernels have that layout (model::WeightBinder), and answers as the file's
// rows do, within rounding: this random model's prompt logits move by 5e-3 (relative) between
// the AVX2 and AVX-512 tables in Q8_0, and by 6e-3 between Q4_K read interleaved and read in rows
// (whose AVX-512 kernel takes other float steps), so 2e-2 bounds them; a wrong row or scale
// moves them by far more.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "apps/test_models.h"
#include "kernels/kernels.h"

namespace ds::apps {
namespace {

using state::SequenceState;

bool KernelsInterleave(tensor::DType dtype) {
  const kernels::MatrixView probe{nullptr, dtype, 16, 256, tensor::RowBytes(dtype, 256)};
  return kernels::CanInterleaveRows(probe);
}

std::vector<float> PromptLogits(model::Model& m, const std::vector<int32_t>& ids,
                                ThreadPool* pool) {
  SequenceState s(m.StateLayoutFor(256));
  return Prefill(m, &s, ids, 0, static_cast<int64_t>(ids.size()), 16, pool);
}

double RelativeDistance(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff += (double{a[i]} - b[i]) * (double{a[i]} - b[i]);
    norm += double{b[i]} * b[i];
  }
  return std::sqrt(diff / norm);
}

class InterleavedWeightsTest : public testing::TestWithParam<tensor::DType> {};

TEST_P(InterleavedWeightsTest, AModelInMemoryReadsInterleavedAsItsRowsWouldAnswer) {
  if (!KernelsInterleave(GetParam())) {
    GTEST_SKIP() << "the active kernels read " << tensor::DTypeName(GetParam())
                 << " rows as they lie";
  }
  ThreadPool pool(2);
  const std::unique_ptr<TestModel> interleaved =
      BuildTestModel(TinyKQuantConfig("qwen35moe", GetParam()));
  EXPECT_NE(interleaved->loaded_bytes, interleaved->bytes) << "no matrix was rewritten";
  // The embedding's rows are read one by one and stay as the file has them.
  const gguf::TensorInfo* embedding = interleaved->file->FindTensor("token_embd.weight");
  ASSERT_NE(embedding, nullptr);
  const size_t at = static_cast<size_t>(embedding->data - interleaved->loaded_bytes.data());
  EXPECT_TRUE(std::equal(embedding->data, embedding->data + embedding->size_bytes,
                         interleaved->bytes.begin() + static_cast<std::ptrdiff_t>(at)));

  // The same file read in place, where nothing can be rewritten.
  auto rows_file = gguf::File::FromBuffer(interleaved->bytes, "rows");
  ASSERT_TRUE(rows_file.ok()) << rows_file.status().ToString();
  auto rows_model = model::Model::Load(**rows_file);
  ASSERT_TRUE(rows_model.ok()) << rows_model.status().ToString();

  const std::vector<int32_t> ids =
      RandomPrompt(40, interleaved->model->hparams().n_vocab, /*seed=*/3);
  const std::vector<float> got = PromptLogits(*interleaved->model, ids, &pool);
  const std::vector<float> want = PromptLogits(**rows_model, ids, &pool);
  EXPECT_LT(RelativeDistance(got, want), 2e-2);
  EXPECT_EQ(std::max_element(got.begin(), got.end()) - got.begin(),
            std::max_element(want.begin(), want.end()) - want.begin());

  // A second model of the rewritten file reads the matrices as they now lie.
  auto again = model::Model::Load(*interleaved->file);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(PromptLogits(**again, ids, &pool), got);
}

INSTANTIATE_TEST_SUITE_P(KQuants, InterleavedWeightsTest,
                         testing::Values(tensor::DType::kQ4_K, tensor::DType::kQ5_K,
                                         tensor::DType::kQ6_K),
                         [](const testing::TestParamInfo<tensor::DType>& info) {
                           return std::string(tensor::DTypeName(info.param));
                         });

}  // namespace
}  // namespace ds::apps
