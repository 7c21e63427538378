// Deterministic random tensors for make-model: each tensor's values depend only on the model
// seed and the tensor name (not on the order of writing), and on no library's distribution
// implementation, so a config gives the same file on every machine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "tensor/dtype.h"

namespace ds::apps {

class RandomWeights {
 public:
  RandomWeights(gguf::Writer* writer, tensor::DType matrix_dtype, uint64_t seed)
      : writer_(writer), matrix_dtype_(matrix_dtype), seed_(seed) {}

  // Weights {n_cols, n_rows, n_mats...} ~ N(0, stddev^2), stored in the matrix dtype when the row
  // length allows it (else the closest type that does, as llama.cpp's quantiser falls back).
  void Matrix(const std::string& name, std::vector<int64_t> ne, float stddev);
  // One stack of `n_mats` matrices written as `name`, each the rows of parts[0]'s matrix then
  // parts[1]'s and so on, with the values Matrix(part, {n_cols, n_rows, n_mats}) would draw.
  void FusedMatrices(const std::string& name, const std::vector<std::string>& parts,
                     int64_t n_cols, int64_t n_rows, int64_t n_mats, float stddev);
  // f32 values ~ mean + N(0, stddev^2).
  void Floats(const std::string& name, std::vector<int64_t> ne, float mean, float stddev);
  // f32 values ~ U(low, high).
  void Uniform(const std::string& name, std::vector<int64_t> ne, float low, float high);

 private:
  std::vector<float> Normal(const std::string& name, int64_t count, float mean, float stddev);
  tensor::DType TypeForRow(int64_t n_cols) const;
  void AddQuantized(const std::string& name, std::vector<int64_t> ne,
                    const std::vector<float>& values);

  gguf::Writer* writer_;
  tensor::DType matrix_dtype_;
  uint64_t seed_;
};

}  // namespace ds::apps
