// Per-type row codecs behind DequantizeRow / QuantizeRow (internal to the tensor library).
// n is the element count of the row, a multiple of the type's block size; src/dst point at whole
// blocks laid out as in tensor/blocks.h.
// Thread safety: pure functions.
#pragma once

#include <cstdint>

namespace ds::tensor::internal {

// quant_legacy.cc
void DequantizeQ4_0(const void* src, float* dst, int64_t n);
void DequantizeQ4_1(const void* src, float* dst, int64_t n);
void DequantizeQ5_0(const void* src, float* dst, int64_t n);
void DequantizeQ5_1(const void* src, float* dst, int64_t n);
void DequantizeQ8_0(const void* src, float* dst, int64_t n);
void QuantizeQ4_0(const float* src, void* dst, int64_t n);
void QuantizeQ4_1(const float* src, void* dst, int64_t n);
void QuantizeQ5_0(const float* src, void* dst, int64_t n);
void QuantizeQ5_1(const float* src, void* dst, int64_t n);
void QuantizeQ8_0(const float* src, void* dst, int64_t n);

// quant_k.cc
void DequantizeQ2_K(const void* src, float* dst, int64_t n);
void DequantizeQ3_K(const void* src, float* dst, int64_t n);
void DequantizeQ4_K(const void* src, float* dst, int64_t n);
void DequantizeQ5_K(const void* src, float* dst, int64_t n);
void DequantizeQ6_K(const void* src, float* dst, int64_t n);
void DequantizeQ8_K(const void* src, float* dst, int64_t n);
void QuantizeQ2_K(const float* src, void* dst, int64_t n);
void QuantizeQ3_K(const float* src, void* dst, int64_t n);
void QuantizeQ4_K(const float* src, void* dst, int64_t n);
void QuantizeQ5_K(const float* src, void* dst, int64_t n);
void QuantizeQ6_K(const float* src, void* dst, int64_t n);
void QuantizeQ8_K(const float* src, void* dst, int64_t n);

}  // namespace ds::tensor::internal
