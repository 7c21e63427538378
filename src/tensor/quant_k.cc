// Codecs of the 256-element K-quant super-blocks Q2_K .. Q6_K and of Q8_K. The decoders form each
// value with the same float operations, in the same order, as llama.cpp's dequantize_row_*, so
// results are bit-identical to it. Element placement is documented in tensor/blocks.h.
#include <cmath>
#include <cstring>

#include "tensor/blocks.h"
#include "tensor/fp16.h"
#include "tensor/quant_codecs.h"
#include "tensor/quant_fit.h"

namespace ds::tensor::internal {
namespace {

// Byte and shift of the 2-bit field of element e in a Q2_K/Q3_K `qs` array.
int TwoBitByte(int e) { return 32 * (e / 128) + e % 32; }
int TwoBitShift(int e) { return 2 * ((e % 128) / 32); }

// Byte of element e in a Q4_K/Q5_K `qs` array; the high nibble holds it when (e / 32) is odd.
int NibbleByte(int e) { return 32 * (e / 64) + e % 32; }

}  // namespace

void DequantizeQ2_K(const void* src, float* dst, int64_t n) {
  const auto* blocks = static_cast<const BlockQ2_K*>(src);
  for (int64_t b = 0; b < n / kQK_K; ++b, dst += kQK_K) {
    const BlockQ2_K& blk = blocks[b];
    const float d = Fp16ToFp32(blk.d);
    const float dmin = Fp16ToFp32(blk.dmin);
    for (int e = 0; e < kQK_K; ++e) {
      const uint8_t sc = blk.scales[e / 16];
      const float dl = d * (sc & 0xf);
      const float ml = dmin * (sc >> 4);
      const int q = (blk.qs[TwoBitByte(e)] >> TwoBitShift(e)) & 3;
      dst[e] = dl * q - ml;
    }
  }
}

void DequantizeQ3_K(const void* src, float* dst, int64_t n) {
  const auto* blocks = static_cast<const BlockQ3_K*>(src);
  for (int64_t b = 0; b < n / kQK_K; ++b, dst += kQK_K) {
    const BlockQ3_K& blk = blocks[b];
    const float d = Fp16ToFp32(blk.d);
    uint8_t scales[16];
    UnpackQ3KScales(blk.scales, scales);
    for (int e = 0; e < kQK_K; ++e) {
      const float dl = d * (scales[e / 16] - 32);
      const int low = (blk.qs[TwoBitByte(e)] >> TwoBitShift(e)) & 3;
      const bool high = (blk.hmask[e % 32] >> (e / 32)) & 1;
      dst[e] = dl * (low - (high ? 0 : 4));
    }
  }
}

void DequantizeQ4_K(const void* src, float* dst, int64_t n) {
  const auto* blocks = static_cast<const BlockQ4_K*>(src);
  for (int64_t b = 0; b < n / kQK_K; ++b, dst += kQK_K) {
    const BlockQ4_K& blk = blocks[b];
    const float d = Fp16ToFp32(blk.d);
    const float dmin = Fp16ToFp32(blk.dmin);
    for (int sub = 0; sub < 8; ++sub) {
      uint8_t sc, mn;
      UnpackScaleMinK4(blk.scales, sub, &sc, &mn);
      const float dl = d * sc;
      const float ml = dmin * mn;
      const int shift = 4 * (sub & 1);
      for (int l = 0; l < 32; ++l) {
        const int e = 32 * sub + l;
        dst[e] = dl * ((blk.qs[NibbleByte(e)] >> shift) & 0xf) - ml;
      }
    }
  }
}

void DequantizeQ5_K(const void* src, float* dst, int64_t n) {
  const auto* blocks = static_cast<const BlockQ5_K*>(src);
  for (int64_t b = 0; b < n / kQK_K; ++b, dst += kQK_K) {
    const BlockQ5_K& blk = blocks[b];
    const float d = Fp16ToFp32(blk.d);
    const float dmin = Fp16ToFp32(blk.dmin);
    for (int sub = 0; sub < 8; ++sub) {
      uint8_t sc, mn;
      UnpackScaleMinK4(blk.scales, sub, &sc, &mn);
      const float dl = d * sc;
      const float ml = dmin * mn;
      const int shift = 4 * (sub & 1);
      for (int l = 0; l < 32; ++l) {
        const int e = 32 * sub + l;
        const int q = ((blk.qs[NibbleByte(e)] >> shift) & 0xf) | (((blk.qh[l] >> sub) & 1) << 4);
        dst[e] = dl * q - ml;
      }
    }
  }
}

void DequantizeQ6_K(const void* src, float* dst, int64_t n) {
  const auto* blocks = static_cast<const BlockQ6_K*>(src);
  for (int64_t b = 0; b < n / kQK_K; ++b, dst += kQK_K) {
    const BlockQ6_K& blk = blocks[b];
    const float d = Fp16ToFp32(blk.d);
    for (int e = 0; e < kQK_K; ++e) {
      const int h = e / 128;
      const int s = (e % 128) / 32;
      const int l = e % 32;
      const int low = (blk.ql[64 * h + 32 * (s & 1) + l] >> (4 * (s >> 1))) & 0xf;
      const int high = (blk.qh[32 * h + l] >> (2 * s)) & 3;
      dst[e] = d * blk.scales[e / 16] * ((low | high << 4) - 32);
    }
  }
}

void DequantizeQ8_K(const void* src, float* dst, int64_t n) {
  const auto* blocks = static_cast<const BlockQ8_K*>(src);
  for (int64_t b = 0; b < n / kQK_K; ++b, dst += kQK_K) {
    for (int e = 0; e < kQK_K; ++e) dst[e] = blocks[b].d * blocks[b].qs[e];
  }
}

void QuantizeQ2_K(const float* src, void* dst, int64_t n) {
  auto* blocks = static_cast<BlockQ2_K*>(dst);
  for (int64_t b = 0; b < n / kQK_K; ++b, src += kQK_K) {
    AffineSuperBlock fit;
    FitAffineSuperBlock(src, 16, 16, /*qmax=*/3, /*sub_max=*/15, &fit);
    BlockQ2_K& blk = blocks[b];
    blk.d = fit.d;
    blk.dmin = fit.dmin;
    for (int j = 0; j < 16; ++j)
      blk.scales[j] = static_cast<uint8_t>(fit.scales[j] | fit.mins[j] << 4);
    std::memset(blk.qs, 0, sizeof(blk.qs));
    for (int e = 0; e < kQK_K; ++e) blk.qs[TwoBitByte(e)] |= fit.q[e] << TwoBitShift(e);
  }
}

void QuantizeQ3_K(const float* src, void* dst, int64_t n) {
  auto* blocks = static_cast<BlockQ3_K*>(dst);
  for (int64_t b = 0; b < n / kQK_K; ++b, src += kQK_K) {
    SymmetricSuperBlock fit;
    FitSymmetricSuperBlock(src, -4, 3, /*sub_min=*/-32, /*sub_max=*/31, &fit);
    BlockQ3_K& blk = blocks[b];
    blk.d = fit.d;
    std::memset(blk.scales, 0, sizeof(blk.scales));
    for (int j = 0; j < 16; ++j) {
      const int stored = fit.scales[j] + 32;
      blk.scales[j % 8] |= static_cast<uint8_t>((stored & 0xf) << (4 * (j / 8)));
      blk.scales[8 + j % 4] |= static_cast<uint8_t>((stored >> 4) << (2 * (j / 4)));
    }
    std::memset(blk.qs, 0, sizeof(blk.qs));
    std::memset(blk.hmask, 0, sizeof(blk.hmask));
    for (int e = 0; e < kQK_K; ++e) {
      const int level = fit.q[e] + 4;  // [0, 7]; bit 2 is the hmask bit
      blk.qs[TwoBitByte(e)] |= static_cast<uint8_t>((level & 3) << TwoBitShift(e));
      blk.hmask[e % 32] |= static_cast<uint8_t>((level >> 2) << (e / 32));
    }
  }
}

namespace {

// Packs the 6-bit scales and mins of 8 sub-blocks as UnpackScaleMinK4 reads them.
void PackScaleMinK4(const uint8_t* scales, const uint8_t* mins, uint8_t packed[12]) {
  for (int j = 0; j < 4; ++j) {
    packed[j] = static_cast<uint8_t>(scales[j] | (scales[j + 4] >> 4) << 6);
    packed[j + 4] = static_cast<uint8_t>(mins[j] | (mins[j + 4] >> 4) << 6);
    packed[j + 8] = static_cast<uint8_t>((scales[j + 4] & 0xf) | (mins[j + 4] & 0xf) << 4);
  }
}

}  // namespace

void QuantizeQ4_K(const float* src, void* dst, int64_t n) {
  auto* blocks = static_cast<BlockQ4_K*>(dst);
  for (int64_t b = 0; b < n / kQK_K; ++b, src += kQK_K) {
    AffineSuperBlock fit;
    FitAffineSuperBlock(src, 8, 32, /*qmax=*/15, /*sub_max=*/63, &fit);
    BlockQ4_K& blk = blocks[b];
    blk.d = fit.d;
    blk.dmin = fit.dmin;
    PackScaleMinK4(fit.scales, fit.mins, blk.scales);
    std::memset(blk.qs, 0, sizeof(blk.qs));
    for (int e = 0; e < kQK_K; ++e) blk.qs[NibbleByte(e)] |= fit.q[e] << (4 * ((e / 32) & 1));
  }
}

void QuantizeQ5_K(const float* src, void* dst, int64_t n) {
  auto* blocks = static_cast<BlockQ5_K*>(dst);
  for (int64_t b = 0; b < n / kQK_K; ++b, src += kQK_K) {
    AffineSuperBlock fit;
    FitAffineSuperBlock(src, 8, 32, /*qmax=*/31, /*sub_max=*/63, &fit);
    BlockQ5_K& blk = blocks[b];
    blk.d = fit.d;
    blk.dmin = fit.dmin;
    PackScaleMinK4(fit.scales, fit.mins, blk.scales);
    std::memset(blk.qs, 0, sizeof(blk.qs));
    std::memset(blk.qh, 0, sizeof(blk.qh));
    for (int e = 0; e < kQK_K; ++e) {
      blk.qs[NibbleByte(e)] |= static_cast<uint8_t>((fit.q[e] & 0xf) << (4 * ((e / 32) & 1)));
      blk.qh[e % 32] |= static_cast<uint8_t>((fit.q[e] >> 4) << (e / 32));
    }
  }
}

void QuantizeQ6_K(const float* src, void* dst, int64_t n) {
  auto* blocks = static_cast<BlockQ6_K*>(dst);
  for (int64_t b = 0; b < n / kQK_K; ++b, src += kQK_K) {
    SymmetricSuperBlock fit;
    FitSymmetricSuperBlock(src, -32, 31, /*sub_min=*/-128, /*sub_max=*/127, &fit);
    BlockQ6_K& blk = blocks[b];
    blk.d = fit.d;
    std::memcpy(blk.scales, fit.scales, sizeof(blk.scales));
    std::memset(blk.ql, 0, sizeof(blk.ql));
    std::memset(blk.qh, 0, sizeof(blk.qh));
    for (int e = 0; e < kQK_K; ++e) {
      const int level = fit.q[e] + 32;  // [0, 63]
      const int h = e / 128;
      const int s = (e % 128) / 32;
      const int l = e % 32;
      blk.ql[64 * h + 32 * (s & 1) + l] |= static_cast<uint8_t>((level & 0xf) << (4 * (s >> 1)));
      blk.qh[32 * h + l] |= static_cast<uint8_t>((level >> 4) << (2 * s));
    }
  }
}

// Activations: absmax scale kept in float, no search (the kernels call this per token).
void QuantizeQ8_K(const float* src, void* dst, int64_t n) {
  auto* blocks = static_cast<BlockQ8_K*>(dst);
  for (int64_t b = 0; b < n / kQK_K; ++b, src += kQK_K) {
    BlockQ8_K& blk = blocks[b];
    float max_abs = 0.0f;
    for (int e = 0; e < kQK_K; ++e) max_abs = std::fmax(max_abs, std::fabs(src[e]));
    blk.d = max_abs / 127.0f;
    for (int e = 0; e < kQK_K; ++e) {
      blk.qs[e] = static_cast<int8_t>(blk.d != 0.0f ? RoundClamp(src[e] / blk.d, -127, 127) : 0);
    }
    for (int g = 0; g < kQK_K / 16; ++g) {
      int sum = 0;
      for (int e = 16 * g; e < 16 * (g + 1); ++e) sum += blk.qs[e];
      blk.bsums[g] = static_cast<int16_t>(sum);
    }
  }
}

}  // namespace ds::tensor::internal
