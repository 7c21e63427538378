// Small random models built in memory with make-model, for tests that need a real forward pass
// without reading anything from disk.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "apps/make_model.h"
#include "gguf/gguf.h"
#include "model/model.h"

namespace ds::apps {

struct TestModel {
  std::vector<uint8_t> bytes;  // the GGUF as made
  std::vector<uint8_t> loaded_bytes;  // a copy, which file views and model may rewrite tensors in
  std::unique_ptr<gguf::File> file;
  std::unique_ptr<model::Model> model;
};

// A tiny config of `arch` (any supported architecture) with f32 weights.
ModelConfig TinyConfig(const std::string& arch);
// The same with K-quant weights (Q4_K, Q5_K or Q6_K) wherever a matrix's rows hold whole
// super-blocks (256 columns: the embedding width and what reads it), so that the kernels may
// interleave them.
ModelConfig TinyKQuantConfig(const std::string& arch, tensor::DType dtype);
// TinyConfig(name); for "arch/q4_K" (or q5_K, q6_K) TinyKQuantConfig(arch, that dtype); for
// "arch/many_experts" TinyConfig(arch) with a router too large for a decode step to run on the
// calling thread.
ModelConfig TestConfig(const std::string& name);
// REQUIRES: the config is valid (a failure aborts the test binary with the error).
std::unique_ptr<TestModel> BuildTestModel(const ModelConfig& config);

// n token ids drawn uniformly from the vocabulary with `seed`.
std::vector<int32_t> RandomPrompt(int64_t n, int64_t n_vocab, uint32_t seed);
// Prefills ids [begin, end) into `s` in pieces of `split` tokens and returns the last logits;
// a failed forward pass fails the test.
std::vector<float> Prefill(model::Model& m, state::SequenceState* s,
                           const std::vector<int32_t>& ids, int64_t begin, int64_t end,
                           int64_t split, ThreadPool* pool);
// max |a - b| / max |b| (sizes must agree).
double MaxRelativeError(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace ds::apps
