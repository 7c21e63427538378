// Codecs of the 32-element block types Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0. The decoders form each
// value with the same float operations, in the same order, as llama.cpp's dequantize_row_*, so
// results are bit-identical to it.
#include <cmath>
#include <cstring>

#include "tensor/blocks.h"
#include "tensor/fp16.h"
#include "tensor/quant_codecs.h"
#include "tensor/quant_fit.h"

namespace ds::tensor::internal {
namespace {

uint32_t LoadQh(const uint8_t qh[4]) {
  return static_cast<uint32_t>(qh[0]) | static_cast<uint32_t>(qh[1]) << 8 |
         static_cast<uint32_t>(qh[2]) << 16 | static_cast<uint32_t>(qh[3]) << 24;
}

void StoreQh(uint32_t bits, uint8_t qh[4]) {
  for (int i = 0; i < 4; ++i) qh[i] = static_cast<uint8_t>(bits >> (8 * i));
}

// Packs 32 levels in [0, 15] two per byte: element j in the low nibble, j + 16 in the high one.
void PackNibbles(const int* levels, uint8_t qs[kQK / 2]) {
  for (int j = 0; j < kQK / 2; ++j) {
    qs[j] = static_cast<uint8_t>((levels[j] & 0xf) | (levels[j + kQK / 2] & 0xf) << 4);
  }
}

// Bit 4 of each of 32 levels in [0, 31], element j at bit j.
uint32_t HighBits(const int* levels) {
  uint32_t bits = 0;
  for (int j = 0; j < kQK; ++j) bits |= static_cast<uint32_t>((levels[j] >> 4) & 1) << j;
  return bits;
}

// Levels (q + bias, in [0, 2 * bias)) of a symmetric block with stored half scale d.
void SymmetricLevels(const float* x, uint16_t d_half, int bias, int* levels) {
  const float d = Fp16ToFp32(d_half);
  for (int j = 0; j < kQK; ++j) {
    levels[j] = d != 0.0f ? RoundClamp(x[j] / d, -bias, bias - 1) + bias : bias;
  }
}

// Levels in [0, qmax] of an affine block with stored half scale d and offset m.
void AffineLevels(const float* x, uint16_t d_half, uint16_t m_half, int qmax, int* levels) {
  const float d = Fp16ToFp32(d_half);
  const float m = Fp16ToFp32(m_half);
  for (int j = 0; j < kQK; ++j) {
    levels[j] = d != 0.0f ? RoundClamp((x[j] - m) / d, 0, qmax) : 0;
  }
}

}  // namespace

void DequantizeQ4_0(const void* src, float* dst, int64_t n) {
  const auto* blocks = static_cast<const BlockQ4_0*>(src);
  for (int64_t b = 0; b < n / kQK; ++b, dst += kQK) {
    const float d = Fp16ToFp32(blocks[b].d);
    for (int j = 0; j < kQK / 2; ++j) {
      const int x0 = (blocks[b].qs[j] & 0xf) - 8;
      const int x1 = (blocks[b].qs[j] >> 4) - 8;
      dst[j] = x0 * d;
      dst[j + kQK / 2] = x1 * d;
    }
  }
}

void DequantizeQ4_1(const void* src, float* dst, int64_t n) {
  const auto* blocks = static_cast<const BlockQ4_1*>(src);
  for (int64_t b = 0; b < n / kQK; ++b, dst += kQK) {
    const float d = Fp16ToFp32(blocks[b].d);
    const float m = Fp16ToFp32(blocks[b].m);
    for (int j = 0; j < kQK / 2; ++j) {
      const int x0 = blocks[b].qs[j] & 0xf;
      const int x1 = blocks[b].qs[j] >> 4;
      dst[j] = x0 * d + m;
      dst[j + kQK / 2] = x1 * d + m;
    }
  }
}

void DequantizeQ5_0(const void* src, float* dst, int64_t n) {
  const auto* blocks = static_cast<const BlockQ5_0*>(src);
  for (int64_t b = 0; b < n / kQK; ++b, dst += kQK) {
    const float d = Fp16ToFp32(blocks[b].d);
    const uint32_t qh = LoadQh(blocks[b].qh);
    for (int j = 0; j < kQK / 2; ++j) {
      const int h0 = static_cast<int>((qh >> j) & 1) << 4;
      const int h1 = static_cast<int>((qh >> (j + kQK / 2)) & 1) << 4;
      const int x0 = ((blocks[b].qs[j] & 0xf) | h0) - 16;
      const int x1 = ((blocks[b].qs[j] >> 4) | h1) - 16;
      dst[j] = x0 * d;
      dst[j + kQK / 2] = x1 * d;
    }
  }
}

void DequantizeQ5_1(const void* src, float* dst, int64_t n) {
  const auto* blocks = static_cast<const BlockQ5_1*>(src);
  for (int64_t b = 0; b < n / kQK; ++b, dst += kQK) {
    const float d = Fp16ToFp32(blocks[b].d);
    const float m = Fp16ToFp32(blocks[b].m);
    const uint32_t qh = LoadQh(blocks[b].qh);
    for (int j = 0; j < kQK / 2; ++j) {
      const int h0 = static_cast<int>((qh >> j) & 1) << 4;
      const int h1 = static_cast<int>((qh >> (j + kQK / 2)) & 1) << 4;
      const int x0 = (blocks[b].qs[j] & 0xf) | h0;
      const int x1 = (blocks[b].qs[j] >> 4) | h1;
      dst[j] = x0 * d + m;
      dst[j + kQK / 2] = x1 * d + m;
    }
  }
}

void DequantizeQ8_0(const void* src, float* dst, int64_t n) {
  const auto* blocks = static_cast<const BlockQ8_0*>(src);
  for (int64_t b = 0; b < n / kQK; ++b, dst += kQK) {
    const float d = Fp16ToFp32(blocks[b].d);
    for (int j = 0; j < kQK; ++j) dst[j] = blocks[b].qs[j] * d;
  }
}

void QuantizeQ4_0(const float* src, void* dst, int64_t n) {
  auto* blocks = static_cast<BlockQ4_0*>(dst);
  for (int64_t b = 0; b < n / kQK; ++b, src += kQK) {
    blocks[b].d = ScaleToHalf(FitSymmetric(src, kQK, -8, 7));
    int levels[kQK];
    SymmetricLevels(src, blocks[b].d, 8, levels);
    PackNibbles(levels, blocks[b].qs);
  }
}

void QuantizeQ4_1(const float* src, void* dst, int64_t n) {
  auto* blocks = static_cast<BlockQ4_1*>(dst);
  for (int64_t b = 0; b < n / kQK; ++b, src += kQK) {
    const AffineFit fit = FitAffine(src, kQK, 15, /*offset_nonpositive=*/false);
    blocks[b].d = ScaleToHalf(fit.scale);
    blocks[b].m = ScaleToHalf(fit.offset);
    int levels[kQK];
    AffineLevels(src, blocks[b].d, blocks[b].m, 15, levels);
    PackNibbles(levels, blocks[b].qs);
  }
}

void QuantizeQ5_0(const float* src, void* dst, int64_t n) {
  auto* blocks = static_cast<BlockQ5_0*>(dst);
  for (int64_t b = 0; b < n / kQK; ++b, src += kQK) {
    blocks[b].d = ScaleToHalf(FitSymmetric(src, kQK, -16, 15));
    int levels[kQK];
    SymmetricLevels(src, blocks[b].d, 16, levels);
    PackNibbles(levels, blocks[b].qs);
    StoreQh(HighBits(levels), blocks[b].qh);
  }
}

void QuantizeQ5_1(const float* src, void* dst, int64_t n) {
  auto* blocks = static_cast<BlockQ5_1*>(dst);
  for (int64_t b = 0; b < n / kQK; ++b, src += kQK) {
    const AffineFit fit = FitAffine(src, kQK, 31, /*offset_nonpositive=*/false);
    blocks[b].d = ScaleToHalf(fit.scale);
    blocks[b].m = ScaleToHalf(fit.offset);
    int levels[kQK];
    AffineLevels(src, blocks[b].d, blocks[b].m, 31, levels);
    PackNibbles(levels, blocks[b].qs);
    StoreQh(HighBits(levels), blocks[b].qh);
  }
}

// Q8_0 has levels to spare, so the plain absmax scale is as good as a search and keeps the
// quantiser cheap enough for activations.
void QuantizeQ8_0(const float* src, void* dst, int64_t n) {
  auto* blocks = static_cast<BlockQ8_0*>(dst);
  for (int64_t b = 0; b < n / kQK; ++b, src += kQK) {
    float max_abs = 0.0f;
    for (int j = 0; j < kQK; ++j) max_abs = std::fmax(max_abs, std::fabs(src[j]));
    blocks[b].d = ScaleToHalf(max_abs / 127.0f);
    const float d = Fp16ToFp32(blocks[b].d);
    for (int j = 0; j < kQK; ++j) {
      blocks[b].qs[j] = static_cast<int8_t>(d != 0.0f ? RoundClamp(src[j] / d, -127, 127) : 0);
    }
  }
}

}  // namespace ds::tensor::internal
