// Byte layouts of the quantised blocks GGUF stores (llama.cpp's ggml-common.h), as plain structs
// whose sizes equal Traits(type).block_bytes, plus the helpers that unpack their packed sub-block
// scales. Scales named `d`/`m`/`dmin` are IEEE half bits (decode with tensor/fp16.h), except
// BlockQ8_K::d, which is a float. All multi-byte fields are little-endian, as on every host we
// build for.
//
// Shared vocabulary: a block encodes kQK (32) or kQK_K (256) consecutive row elements. "Low
// nibble j / high nibble j" means byte j & 0xf and byte j >> 4. Element order within a block is
// documented on each struct; the dequantisers in quant_legacy.cc / quant_k.cc are the executable
// reference and the tests in quant_test.cc pin every layout with hand-built blocks.
//
// Alignment: the structs need at most 2-byte alignment (4 for BlockQ8_K). Rows in GGUF tensor
// data start 32-byte aligned and every block size is even, so casting row pointers is valid.
// Thread safety: types and pure inline functions only.
#pragma once

#include <cstdint>

namespace ds::tensor {

inline constexpr int kQK = 32;     // elements per block of the legacy types (Q4_0 .. Q8_0)
inline constexpr int kQK_K = 256;  // elements per super-block of the K-quants

// x[j] = d * (nib(j) - 8); element j < 16 is low nibble j, element j + 16 is high nibble j.
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQK / 2];
};

// x[j] = d * nib(j) + m; nibble order as BlockQ4_0.
struct BlockQ4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[kQK / 2];
};

// x[j] = d * (q(j) - 16), q 5 bits: low 4 bits as BlockQ4_0, bit 4 of element j is bit j of the
// little-endian uint32 qh (so elements 16..31 use qh bits 16..31).
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};

// x[j] = d * q(j) + m; bit layout as BlockQ5_0.
struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};

// x[j] = d * qs[j].
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[kQK];
};

// 16 sub-blocks of 16. Element e = 128 * h + 32 * s + 16 * g + l (h < 2, s < 4, g < 2, l < 16) is
// bits 2s..2s+1 of qs[32 * h + 16 * g + l], in sub-block 8 * h + 2 * s + g = e / 16, and
// x[e] = d * (scales[e/16] & 0xf) * q - dmin * (scales[e/16] >> 4).
struct BlockQ2_K {
  uint8_t scales[kQK_K / 16];
  uint8_t qs[kQK_K / 4];
  uint16_t d;
  uint16_t dmin;
};

// 16 sub-blocks of 16. The low 2 bits of element e are placed exactly as in BlockQ2_K; its high
// bit is bit e / 32 of hmask[e % 32]. q = low2 - (high bit set ? 0 : 4), in [-4, 3].
// x[e] = d * (Q3KScale(scales, e / 16) - 32) * q, with 6-bit scales unpacked by UnpackQ3KScales.
struct BlockQ3_K {
  uint8_t hmask[kQK_K / 8];
  uint8_t qs[kQK_K / 4];
  uint8_t scales[12];
  uint16_t d;
};

// 8 sub-blocks of 32 with 6-bit scale sc and min mn (UnpackScaleMinK4). Element
// e = 64 * c + 32 * hi + l is nibble `hi` of qs[32 * c + l], in sub-block e / 32, and
// x[e] = d * sc * q - dmin * mn.
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qs[kQK_K / 2];
};

// As BlockQ4_K with a fifth bit: bit 4 of element e = 64 * c + 32 * hi + l is bit 2 * c + hi of
// qh[l].
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[kQK_K / 8];
  uint8_t qs[kQK_K / 2];
};

// 16 sub-blocks of 16, q 6 bits in [0, 63]. Element e = 128 * h + 32 * s + l (h < 2, s < 4,
// l < 32): low 4 bits are nibble (s >= 2) of ql[64 * h + 32 * (s & 1) + l], high 2 bits are bits
// 2s..2s+1 of qh[32 * h + l]; x[e] = d * scales[e / 16] * (q - 32).
struct BlockQ6_K {
  uint8_t ql[kQK_K / 2];
  uint8_t qh[kQK_K / 4];
  int8_t scales[kQK_K / 16];
  uint16_t d;
};

// Activations for the K-quant dot products: x[e] = d * qs[e]; bsums[i] = sum of qs[16i..16i+15].
struct BlockQ8_K {
  float d;
  int8_t qs[kQK_K];
  int16_t bsums[kQK_K / 16];
};

static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ2_K) == 84);
static_assert(sizeof(BlockQ3_K) == 110);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ8_K) == 292);

// Sub-block j < 8 of a Q4_K/Q5_K `scales` array: 6-bit scale and min. Sub-blocks 0..3 keep theirs
// in the low 6 bits of bytes j and j + 4; sub-blocks 4..7 keep their low 4 bits in the nibbles of
// byte j + 4 and their top 2 bits in the top bits of bytes j - 4 (scale) and j (min).
inline void UnpackScaleMinK4(const uint8_t* scales, int j, uint8_t* scale, uint8_t* min) {
  if (j < 4) {
    *scale = scales[j] & 63;
    *min = scales[j + 4] & 63;
  } else {
    *scale = static_cast<uint8_t>((scales[j + 4] & 0xf) | ((scales[j - 4] >> 6) << 4));
    *min = static_cast<uint8_t>((scales[j + 4] >> 4) | ((scales[j] >> 6) << 4));
  }
}

// The 16 unsigned 6-bit scales of a Q3_K block (subtract 32 to get the signed scale). Scale j has
// its low 4 bits in nibble (j >= 8) of byte j % 8 and its top 2 bits at bits 2*(j/4).. of byte
// 8 + j % 4.
inline uint8_t Q3KScale(const uint8_t* scales, int j) {
  const int low = (j < 8) ? (scales[j] & 0xf) : (scales[j - 8] >> 4);
  const int high = (scales[8 + j % 4] >> (2 * (j / 4))) & 3;
  return static_cast<uint8_t>(low | (high << 4));
}

inline void UnpackQ3KScales(const uint8_t* scales, uint8_t out[16]) {
  for (int j = 0; j < 16; ++j) out[j] = Q3KScale(scales, j);
}

}  // namespace ds::tensor
