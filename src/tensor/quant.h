// Quantisation and dequantisation of rows for every weight dtype, bit-compatible with the block
// layouts GGUF files use (llama.cpp's ggml-quants). These are the scalar reference routines; the
// kernels library holds the fast paths and tests them against these.
// Thread safety: pure functions.
#pragma once

#include <cstdint>

#include "tensor/dtype.h"

namespace ds::tensor {

// dst[0..n) = values of the row at src, bit-identical to llama.cpp's dequantize_row_*.
// REQUIRES: n % block_elems == 0; src aligned to 4 bytes for f32 and q8_K, 2 bytes otherwise
// (as GGUF tensor data is).
void DequantizeRow(DType type, const void* src, float* dst, int64_t n);

// Writes RowBytes(type, n) bytes at dst encoding src[0..n). REQUIRES: n % block_elems == 0 and
// Traits(type).is_weight_type or type == kQ8_K; src finite. Block scales are chosen by a small
// least-squares search (not llama.cpp's exact choices, but the same format: llama.cpp decodes the
// bytes to the same floats). Re-quantising values this function produced (after DequantizeRow)
// reproduces them exactly.
// Half scales saturate at +-65504. Q8_0 and Q8_K use absmax scales and keep qs in [-127, 127]
// (Q8_K: d = absmax / 127 as a float, bsums filled).
void QuantizeRow(DType type, const float* src, void* dst, int64_t n);

}  // namespace ds::tensor
