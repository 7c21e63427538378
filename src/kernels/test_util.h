// Helpers for the kernels tests: a fixture parameterised over every instruction set the CPU
// supports, random inputs, and error measures.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/dispatch.h"

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

}  // namespace ds::kernels
