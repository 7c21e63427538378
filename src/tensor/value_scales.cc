#include "tensor/value_scales.h"

#include "tensor/blocks.h"
#include "tensor/dtype.h"

namespace ds::tensor {

int64_t ValueScalesSize(int64_t n_positions, int64_t row_floats) {
  const int64_t groups = (n_positions + kValueScalePositions - 1) / kValueScalePositions;
  return groups * row_floats / kQK * kValueScalePositions;
}

int64_t ValueScaleIndex(int64_t p, int64_t b, int64_t n_blocks) {
  return (p / kValueScalePositions * n_blocks + b) * kValueScalePositions +
         p % kValueScalePositions;
}

void PutValueScales(const uint8_t* rows, int64_t first, int64_t count, int64_t row_floats,
                    uint16_t* scales) {
  const int64_t n_blocks = row_floats / kQK;
  const int64_t row_bytes = RowBytes(DType::kQ8_0, row_floats);
  for (int64_t i = 0; i < count; ++i) {
    const auto* blocks = reinterpret_cast<const BlockQ8_0*>(rows + i * row_bytes);
    for (int64_t b = 0; b < n_blocks; ++b) {
      scales[ValueScaleIndex(first + i, b, n_blocks)] = blocks[b].d;
    }
  }
}

}  // namespace ds::tensor
