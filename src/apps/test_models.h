// Small random models built in memory with make-model, for tests that need a real forward pass
// without reading anything from disk.
#pragma once

#include <memory>
#include <vector>

#include "apps/make_model.h"
#include "gguf/gguf.h"
#include "model/model.h"

namespace ds::apps {

struct TestModel {
  std::vector<uint8_t> bytes;  // the GGUF; file views it
  std::unique_ptr<gguf::File> file;
  std::unique_ptr<model::Model> model;
};

// A tiny config of `arch` (any supported architecture) with f32 weights.
ModelConfig TinyConfig(const std::string& arch);
// REQUIRES: the config is valid (a failure aborts the test binary with the error).
std::unique_ptr<TestModel> BuildTestModel(const ModelConfig& config);

}  // namespace ds::apps
