// Every table's activation encoders against the portable ones, bit for bit: the integer kernels'
// results (and the cache's cold/warm equivalence) depend on identical codes and scales.
#include "kernels/act_quant.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "kernels/test_util.h"

namespace ds::kernels {
namespace {

using internal::ActFormat;

// Rows that exercise the encoder's edges: zero blocks, one huge value among small ones, values
// that land exactly halfway between two codes, negative maxima, and plain random data.
std::vector<std::vector<float>> EdgeRows(int64_t n_cols, std::mt19937& rng) {
  std::vector<std::vector<float>> rows;
  rows.push_back(std::vector<float>(n_cols, 0.0f));
  rows.push_back(RandomFloats(rng, n_cols, -3.0f, 3.0f));
  rows.push_back(RandomFloats(rng, n_cols, -1e-30f, 1e-30f));
  std::vector<float> spike = RandomFloats(rng, n_cols, -1e-3f, 1e-3f);
  spike[5] = -1e6f;
  rows.push_back(spike);
  // amax 127 gives d = 1, so k + 0.5 are exact ties: they must round to even.
  std::vector<float> ties(n_cols);
  for (int64_t i = 0; i < n_cols; ++i) ties[i] = (i % 32 == 0) ? 127.0f : (i % 200) - 100 + 0.5f;
  rows.push_back(ties);
  std::vector<float> half_zero = RandomFloats(rng, n_cols);
  std::fill(half_zero.begin(), half_zero.begin() + n_cols / 2, 0.0f);
  rows.push_back(half_zero);
  return rows;
}

class ActQuantTest : public IsaTest {};

TEST_P(ActQuantTest, EncodersMatchThePortableOnesBitForBit) {
  std::mt19937 rng(17);
  for (ActFormat format : {ActFormat::kQ8Blocks, ActFormat::kQ8KBlocks}) {
    for (int64_t n_cols : {256, 512, 2048}) {
      const int64_t bytes = internal::ActRowBytes(format, n_cols);
      for (const std::vector<float>& row : EdgeRows(n_cols, rng)) {
        std::vector<uint8_t> got(bytes), want(bytes);
        internal::QuantizeActRow(format, row.data(), n_cols, got.data());
        if (format == ActFormat::kQ8Blocks) {
          internal::QuantizeRowQ8Portable(row.data(), n_cols,
                                          reinterpret_cast<internal::ActBlockQ8*>(want.data()));
        } else {
          internal::QuantizeRowQ8KPortable(row.data(), n_cols,
                                           reinterpret_cast<tensor::BlockQ8_K*>(want.data()));
        }
        EXPECT_EQ(0, std::memcmp(got.data(), want.data(), bytes))
            << "format " << static_cast<int>(format) << " n_cols " << n_cols;
      }
    }
  }
}

DS_INSTANTIATE_FOR_EACH_ISA(ActQuantTest);

}  // namespace
}  // namespace ds::kernels
