// Internal to the kernels library: preparation of the activation rows a MatVec/MatMul reads, once
// per call. Quantised weight types take int8 activations (ActBlockQ8 for 32-element blocks,
// tensor::BlockQ8_K for 256-element super-blocks) so their row kernels run integer dot products;
// this is what bounds their error relative to the f32 reference (about 1e-2 of the result's norm,
// see matmul_test.cc). The float weight types read the caller's rows unchanged, but for BF16
// weights in a table that multiplies bf16 pairs, which reads them rounded to bf16.
// Thread safety: pure functions.
#pragma once

#include <cstdint>

#include "kernels/kernel_table.h"
#include "tensor/dtype.h"

namespace ds::kernels::internal {

ActFormat ActFormatFor(tensor::DType weight_type);
// Bytes of one prepared activation row of n_cols elements.
int64_t ActRowBytes(ActFormat format, int64_t n_cols);
// Encodes x[n_cols] into dst (ActRowBytes bytes). REQUIRES: format != kF32 and n_cols a multiple
// of the format's block size.
void QuantizeActRow(ActFormat format, const float* x, int64_t n_cols, uint8_t* dst);
// The portable encoders behind QuantizeActRow, the reference for the per-ISA ones.
void QuantizeRowQ8Portable(const float* x, int64_t n_cols, ActBlockQ8* out);
void QuantizeRowQ8KPortable(const float* x, int64_t n_cols, tensor::BlockQ8_K* out);
// The values a quantised activation row stands for (what the integer kernels effectively read).
void DequantizeActRow(ActFormat format, const uint8_t* src, int64_t n_cols, float* x);

}  // namespace ds::kernels::internal
