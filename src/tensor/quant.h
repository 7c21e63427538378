// Quantisation and dequantisation of rows for every weight dtype, bit-compatible with the block
// layouts GGUF files use (llama.cpp's ggml-quants). These are the scalar reference routines; the
// kernels library holds the fast paths and tests them against these.
// Thread safety: pure functions.
#pragma once

#include <cstdint>

#include "tensor/dtype.h"

namespace ds::tensor {

// dst[0..n) = values of the row at src. REQUIRES: n % block_elems == 0.
void DequantizeRow(DType type, const void* src, float* dst, int64_t n);

// Writes RowBytes(type, n) bytes at dst encoding src[0..n). REQUIRES: n % block_elems == 0 and
// Traits(type).is_weight_type or type == kQ8_K.
void QuantizeRow(DType type, const float* src, void* dst, int64_t n);

}  // namespace ds::tensor
