#include "tensor/quant.h"

#include <cstring>

#include "base/check.h"
#include "tensor/fp16.h"
#include "tensor/quant_codecs.h"

namespace ds::tensor {

void DequantizeRow(DType type, const void* src, float* dst, int64_t n) {
  DS_CHECK(n >= 0 && n % Traits(type).block_elems == 0);
  switch (type) {
    case DType::kF32:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
      return;
    case DType::kF16:
      for (int64_t i = 0; i < n; ++i) dst[i] = Fp16ToFp32(static_cast<const uint16_t*>(src)[i]);
      return;
    case DType::kBF16:
      for (int64_t i = 0; i < n; ++i) dst[i] = Bf16ToFp32(static_cast<const uint16_t*>(src)[i]);
      return;
    case DType::kQ4_0:
      return internal::DequantizeQ4_0(src, dst, n);
    case DType::kQ4_1:
      return internal::DequantizeQ4_1(src, dst, n);
    case DType::kQ5_0:
      return internal::DequantizeQ5_0(src, dst, n);
    case DType::kQ5_1:
      return internal::DequantizeQ5_1(src, dst, n);
    case DType::kQ8_0:
      return internal::DequantizeQ8_0(src, dst, n);
    case DType::kQ2_K:
      return internal::DequantizeQ2_K(src, dst, n);
    case DType::kQ3_K:
      return internal::DequantizeQ3_K(src, dst, n);
    case DType::kQ4_K:
      return internal::DequantizeQ4_K(src, dst, n);
    case DType::kQ5_K:
      return internal::DequantizeQ5_K(src, dst, n);
    case DType::kQ6_K:
      return internal::DequantizeQ6_K(src, dst, n);
    case DType::kQ8_K:
      return internal::DequantizeQ8_K(src, dst, n);
    default:
      DS_CHECK_MSG(false, "DequantizeRow: unsupported dtype");
  }
}

void QuantizeRow(DType type, const float* src, void* dst, int64_t n) {
  DS_CHECK(n >= 0 && n % Traits(type).block_elems == 0);
  switch (type) {
    case DType::kF32:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
      return;
    case DType::kF16:
      for (int64_t i = 0; i < n; ++i) static_cast<uint16_t*>(dst)[i] = Fp32ToFp16(src[i]);
      return;
    case DType::kBF16:
      for (int64_t i = 0; i < n; ++i) static_cast<uint16_t*>(dst)[i] = Fp32ToBf16(src[i]);
      return;
    case DType::kQ4_0:
      return internal::QuantizeQ4_0(src, dst, n);
    case DType::kQ4_1:
      return internal::QuantizeQ4_1(src, dst, n);
    case DType::kQ5_0:
      return internal::QuantizeQ5_0(src, dst, n);
    case DType::kQ5_1:
      return internal::QuantizeQ5_1(src, dst, n);
    case DType::kQ8_0:
      return internal::QuantizeQ8_0(src, dst, n);
    case DType::kQ2_K:
      return internal::QuantizeQ2_K(src, dst, n);
    case DType::kQ3_K:
      return internal::QuantizeQ3_K(src, dst, n);
    case DType::kQ4_K:
      return internal::QuantizeQ4_K(src, dst, n);
    case DType::kQ5_K:
      return internal::QuantizeQ5_K(src, dst, n);
    case DType::kQ6_K:
      return internal::QuantizeQ6_K(src, dst, n);
    case DType::kQ8_K:
      return internal::QuantizeQ8_K(src, dst, n);
    default:
      DS_CHECK_MSG(false, "QuantizeRow: unsupported dtype");
  }
}

}  // namespace ds::tensor
