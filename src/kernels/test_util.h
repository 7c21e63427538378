// Helpers for the kernels tests: a fixture parameterised over every instruction set the CPU
// supports, random inputs, and error measures.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/act_quant.h"
#include "kernels/dispatch.h"
#include "tensor/dtype.h"

namespace ds::kernels {

// Runs each test once per supported ISA, restoring the previous choice afterwards.
class IsaTest : public ::testing::TestWithParam<internal::Isa> {
 protected:
  void SetUp() override {
    saved_ = internal::CurrentIsa();
    internal::SetIsa(GetParam());
  }
  void TearDown() override { internal::SetIsa(saved_); }

 private:
  internal::Isa saved_ = internal::Isa::kScalar;
};

inline std::string IsaParamName(const ::testing::TestParamInfo<internal::Isa>& info) {
  return std::string(internal::IsaName(info.param));
}

#define DS_INSTANTIATE_FOR_EACH_ISA(suite)                                                \
  INSTANTIATE_TEST_SUITE_P(AllIsas, suite,                                                \
                           ::testing::ValuesIn(::ds::kernels::internal::SupportedIsas()), \
                           ::ds::kernels::IsaParamName)

inline std::vector<float> RandomFloats(std::mt19937& rng, int64_t n, float lo = -1.0f,
                                       float hi = 1.0f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

// ||a - b|| / ||b|| over n elements (0 when both are zero).
inline double RelativeError(const float* a, const float* b, int64_t n) {
  double diff = 0.0, norm = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    diff += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    norm += static_cast<double>(b[i]) * b[i];
  }
  if (norm == 0.0) return std::sqrt(diff);
  return std::sqrt(diff / norm);
}

// x[n_tokens][n_cols] rounded to the values the kernels see against weights of `type` (int8
// blocks, or bf16), so a comparison with the reference isolates the weight arithmetic.
inline std::vector<float> AsKernelSeesIt(tensor::DType type, const std::vector<float>& x,
                                         int64_t n_tokens, int64_t n_cols) {
  const internal::ActFormat format = internal::ActFormatFor(type);
  if (format == internal::ActFormat::kF32) return x;
  std::vector<uint8_t> q(static_cast<size_t>(internal::ActRowBytes(format, n_cols)));
  std::vector<float> out(x.size());
  for (int64_t t = 0; t < n_tokens; ++t) {
    internal::QuantizeActRow(format, x.data() + t * n_cols, n_cols, q.data());
    internal::DequantizeActRow(format, q.data(), n_cols, out.data() + t * n_cols);
  }
  return out;
}

}  // namespace ds::kernels
