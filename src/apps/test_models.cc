#include "apps/test_models.h"

#include "apps/default_vocab.h"
#include "base/check.h"

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

std::unique_ptr<TestModel> BuildTestModel(const ModelConfig& config) {
  auto test_model = std::make_unique<TestModel>();
  StatusOr<gguf::Writer> writer = MakeModel(config, MakeDefaultVocab(200));
  DS_CHECK_MSG(writer.ok(), writer.status().ToString().c_str());
  test_model->bytes = writer->Serialize();
  auto file = gguf::File::FromBuffer(test_model->bytes, config.arch + "-test");
  DS_CHECK_MSG(file.ok(), file.status().ToString().c_str());
  test_model->file = std::move(file).value();
  auto model = model::Model::Load(*test_model->file);
  DS_CHECK_MSG(model.ok(), model.status().ToString().c_str());
  test_model->model = std::move(model).value();
  return test_model;
}

}  // namespace ds::apps
