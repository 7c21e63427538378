#include "kernels/act_quant.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/check.h"
#include "kernels/dispatch.h"
#include "tensor/fp16.h"

namespace ds::kernels::internal {
namespace {

// Symmetric int8 quantisation of n values with one scale; returns d and the sum of the codes.
float QuantizeBlock(const float* x, int n, int8_t* qs, int32_t* sum) {
  float amax = 0.0f;
  for (int i = 0; i < n; ++i) amax = std::max(amax, std::fabs(x[i]));
  const float d = amax / 127.0f;
  const float inv_d = d > 0.0f ? 1.0f / d : 0.0f;
  int32_t total = 0;
  for (int i = 0; i < n; ++i) {
    // |x * inv_d| <= 127 up to rounding; the clamp keeps codes symmetric.
    const float v = std::clamp(std::nearbyint(x[i] * inv_d), -127.0f, 127.0f);
    qs[i] = static_cast<int8_t>(v);
    total += qs[i];
  }
  *sum = total;
  return d;
}

}  // namespace

ActFormat ActFormatFor(tensor::DType weight_type) {
  using tensor::DType;
  switch (weight_type) {
    case DType::kF32:
    case DType::kF16:
      return ActFormat::kF32;
    case DType::kBF16:
      return Table().bf16_rounds_activations ? ActFormat::kBf16 : ActFormat::kF32;
    case DType::kQ4_0:
    case DType::kQ4_1:
    case DType::kQ5_0:
    case DType::kQ5_1:
    case DType::kQ8_0:
      return ActFormat::kQ8Blocks;
    case DType::kQ2_K:
    case DType::kQ3_K:
    case DType::kQ4_K:
    case DType::kQ5_K:
    case DType::kQ6_K:
      return ActFormat::kQ8KBlocks;
    default:
      DS_CHECK_MSG(false, "not a weight dtype the kernels support");
      return ActFormat::kF32;
  }
}

int64_t ActRowBytes(ActFormat format, int64_t n_cols) {
  switch (format) {
    case ActFormat::kF32:
      return n_cols * static_cast<int64_t>(sizeof(float));
    case ActFormat::kBf16:
      return n_cols * static_cast<int64_t>(sizeof(uint16_t));
    case ActFormat::kQ8Blocks:
      return n_cols / tensor::kQK * static_cast<int64_t>(sizeof(ActBlockQ8));
    case ActFormat::kQ8KBlocks:
      return n_cols / tensor::kQK_K * static_cast<int64_t>(sizeof(tensor::BlockQ8_K));
  }
  return 0;
}

void QuantizeRowQ8Portable(const float* x, int64_t n_cols, ActBlockQ8* out) {
  for (int64_t b = 0; b < n_cols / tensor::kQK; ++b) {
    int32_t sum = 0;
    out[b].d = QuantizeBlock(x + b * tensor::kQK, tensor::kQK, out[b].qs, &sum);
    out[b].d_sum = out[b].d * static_cast<float>(sum);
  }
}

void QuantizeRowQ8KPortable(const float* x, int64_t n_cols, tensor::BlockQ8_K* out) {
  for (int64_t b = 0; b < n_cols / tensor::kQK_K; ++b) {
    int32_t sum = 0;
    tensor::BlockQ8_K& block = out[b];
    block.d = QuantizeBlock(x + b * tensor::kQK_K, tensor::kQK_K, block.qs, &sum);
    for (int g = 0; g < tensor::kQK_K / 16; ++g) {
      int32_t group = 0;
      for (int i = 0; i < 16; ++i) group += block.qs[16 * g + i];
      block.bsums[g] = static_cast<int16_t>(group);
    }
  }
}

void QuantizeActRow(ActFormat format, const float* x, int64_t n_cols, uint8_t* dst) {
  DS_CHECK(format != ActFormat::kF32);
  if (format == ActFormat::kBf16) {
    auto* out = reinterpret_cast<uint16_t*>(dst);
    for (int64_t i = 0; i < n_cols; ++i) out[i] = tensor::Fp32ToBf16(x[i]);
  } else if (format == ActFormat::kQ8Blocks) {
    DS_CHECK(n_cols % tensor::kQK == 0);
    Table().quantize_q8(x, n_cols, reinterpret_cast<ActBlockQ8*>(dst));
  } else {
    DS_CHECK(n_cols % tensor::kQK_K == 0);
    Table().quantize_q8_k(x, n_cols, reinterpret_cast<tensor::BlockQ8_K*>(dst));
  }
}

void DequantizeActRow(ActFormat format, const uint8_t* src, int64_t n_cols, float* x) {
  if (format == ActFormat::kF32) {
    std::memcpy(x, src, static_cast<size_t>(n_cols) * sizeof(float));
  } else if (format == ActFormat::kBf16) {
    const auto* values = reinterpret_cast<const uint16_t*>(src);
    for (int64_t i = 0; i < n_cols; ++i) x[i] = tensor::Bf16ToFp32(values[i]);
  } else if (format == ActFormat::kQ8Blocks) {
    const auto* blocks = reinterpret_cast<const ActBlockQ8*>(src);
    for (int64_t i = 0; i < n_cols; ++i) {
      const ActBlockQ8& block = blocks[i / tensor::kQK];
      x[i] = block.d * static_cast<float>(block.qs[i % tensor::kQK]);
    }
  } else {
    const auto* blocks = reinterpret_cast<const tensor::BlockQ8_K*>(src);
    for (int64_t i = 0; i < n_cols; ++i) {
      const tensor::BlockQ8_K& block = blocks[i / tensor::kQK_K];
      x[i] = block.d * static_cast<float>(block.qs[i % tensor::kQK_K]);
    }
  }
}

}  // namespace ds::kernels::internal
