// Pins the block layouts bit for bit. Each type gets (a) a hand-built block with chosen bytes whose
// decoded values were worked out by hand from the GGUF layout, and (b) random blocks decoded by an
// independent reference written here from the layout description, reading fields at their byte
// offsets (not through blocks.h) and walking bytes in llama.cpp's loop order rather than ours.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "tensor/fp16.h"
#include "tensor/quant.h"

namespace ds::tensor {
namespace {

constexpr uint16_t kHalfOne = 0x3C00;
constexpr uint16_t kHalfHalf = 0x3800;     // 0.5
constexpr uint16_t kHalfQuarter = 0x3400;  // 0.25
constexpr uint16_t kHalfEighth = 0x3000;   // 0.125
constexpr uint16_t kHalfMinusOne = 0xBC00;

void PutHalf(std::vector<uint8_t>& b, size_t at, uint16_t h) {
  b[at] = static_cast<uint8_t>(h & 0xff);
  b[at + 1] = static_cast<uint8_t>(h >> 8);
}

float GetHalf(const uint8_t* p) { return Fp16ToFp32(static_cast<uint16_t>(p[0] | p[1] << 8)); }

std::vector<float> Decode(DType type, const std::vector<uint8_t>& bytes, int64_t n) {
  std::vector<float> y(static_cast<size_t>(n));
  DequantizeRow(type, bytes.data(), y.data(), n);
  return y;
}

// ---- Independent reference decoders (one block each), in llama.cpp's loop order. ----

void RefQ4_0(const uint8_t* b, float* y) {
  const float d = GetHalf(b);
  for (int j = 0; j < 16; ++j) {
    y[j] = ((b[2 + j] & 0xf) - 8) * d;
    y[j + 16] = ((b[2 + j] >> 4) - 8) * d;
  }
}

void RefQ4_1(const uint8_t* b, float* y) {
  const float d = GetHalf(b), m = GetHalf(b + 2);
  for (int j = 0; j < 16; ++j) {
    y[j] = (b[4 + j] & 0xf) * d + m;
    y[j + 16] = (b[4 + j] >> 4) * d + m;
  }
}

void RefQ5(const uint8_t* b, float* y, bool has_min) {
  const float d = GetHalf(b);
  const float m = has_min ? GetHalf(b + 2) : 0.0f;
  const uint8_t* qh_bytes = b + (has_min ? 4 : 2);
  const uint8_t* qs = qh_bytes + 4;
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, 4);
  for (int j = 0; j < 16; ++j) {
    const int lo = (qs[j] & 0xf) | (((qh >> j) << 4) & 0x10);
    const int hi = (qs[j] >> 4) | ((qh >> (j + 12)) & 0x10);
    y[j] = has_min ? lo * d + m : (lo - 16) * d;
    y[j + 16] = has_min ? hi * d + m : (hi - 16) * d;
  }
}
void RefQ5_0(const uint8_t* b, float* y) { RefQ5(b, y, false); }
void RefQ5_1(const uint8_t* b, float* y) { RefQ5(b, y, true); }

void RefQ8_0(const uint8_t* b, float* y) {
  const float d = GetHalf(b);
  for (int j = 0; j < 32; ++j) y[j] = static_cast<int8_t>(b[2 + j]) * d;
}

void RefQ2_K(const uint8_t* b, float* y) {
  const uint8_t* scales = b;
  const uint8_t* q = b + 16;
  const float d = GetHalf(b + 80), dmin = GetHalf(b + 82);
  int is = 0;
  for (int half = 0; half < 2; ++half, q += 32) {
    for (int shift = 0; shift < 8; shift += 2) {
      for (int g = 0; g < 2; ++g) {
        const uint8_t sc = scales[is++];
        const float dl = d * (sc & 0xf), ml = dmin * (sc >> 4);
        for (int l = 0; l < 16; ++l) *y++ = dl * ((q[16 * g + l] >> shift) & 3) - ml;
      }
    }
  }
}

void RefQ3_K(const uint8_t* b, float* y) {
  const uint8_t* hm = b;
  const uint8_t* q = b + 32;
  const float d = GetHalf(b + 108);
  // Unpack the 16 6-bit scales word-wise, four at a time.
  uint32_t aux[4];
  std::memcpy(aux, b + 96, 12);
  const uint32_t tmp = aux[2];
  aux[2] = ((aux[0] >> 4) & 0x0f0f0f0f) | (((tmp >> 4) & 0x03030303) << 4);
  aux[3] = ((aux[1] >> 4) & 0x0f0f0f0f) | (((tmp >> 6) & 0x03030303) << 4);
  aux[0] = (aux[0] & 0x0f0f0f0f) | (((tmp >> 0) & 0x03030303) << 4);
  aux[1] = (aux[1] & 0x0f0f0f0f) | (((tmp >> 2) & 0x03030303) << 4);
  int8_t scales[16];
  std::memcpy(scales, aux, 16);
  int is = 0;
  uint8_t m = 1;
  for (int half = 0; half < 2; ++half, q += 32) {
    for (int shift = 0; shift < 8; shift += 2, m <<= 1) {
      for (int g = 0; g < 2; ++g) {
        const float dl = d * (scales[is++] - 32);
        for (int l = 0; l < 16; ++l) {
          const int low = (q[16 * g + l] >> shift) & 3;
          *y++ = dl * (low - ((hm[16 * g + l] & m) ? 0 : 4));
        }
      }
    }
  }
}

void RefScaleMin(int j, const uint8_t* s, int* sc, int* mn) {
  if (j < 4) {
    *sc = s[j] & 63;
    *mn = s[j + 4] & 63;
  } else {
    *sc = (s[j + 4] & 0xf) | ((s[j - 4] >> 6) << 4);
    *mn = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

void RefQ45_K(const uint8_t* b, float* y, bool five_bit) {
  const float d = GetHalf(b), dmin = GetHalf(b + 2);
  const uint8_t* scales = b + 4;
  const uint8_t* qh = b + 16;
  const uint8_t* q = b + (five_bit ? 48 : 16);
  uint8_t u1 = 1, u2 = 2;
  for (int chunk = 0; chunk < 4; ++chunk, q += 32, u1 <<= 2, u2 <<= 2) {
    int sc, mn;
    RefScaleMin(2 * chunk, scales, &sc, &mn);
    const float d1 = d * sc, m1 = dmin * mn;
    RefScaleMin(2 * chunk + 1, scales, &sc, &mn);
    const float d2 = d * sc, m2 = dmin * mn;
    for (int l = 0; l < 32; ++l) {
      *y++ = d1 * ((q[l] & 0xf) + (five_bit && (qh[l] & u1) ? 16 : 0)) - m1;
    }
    for (int l = 0; l < 32; ++l) {
      *y++ = d2 * ((q[l] >> 4) + (five_bit && (qh[l] & u2) ? 16 : 0)) - m2;
    }
  }
}
void RefQ4_K(const uint8_t* b, float* y) { RefQ45_K(b, y, false); }
void RefQ5_K(const uint8_t* b, float* y) { RefQ45_K(b, y, true); }

void RefQ6_K(const uint8_t* b, float* y) {
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192);
  const float d = GetHalf(b + 208);
  for (int half = 0; half < 2; ++half, y += 128, ql += 64, qh += 32, sc += 8) {
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q1 = ((ql[l] & 0xf) | (((qh[l] >> 0) & 3) << 4)) - 32;
      const int q2 = ((ql[l + 32] & 0xf) | (((qh[l] >> 2) & 3) << 4)) - 32;
      const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      y[l] = d * sc[is + 0] * q1;
      y[l + 32] = d * sc[is + 2] * q2;
      y[l + 64] = d * sc[is + 4] * q3;
      y[l + 96] = d * sc[is + 6] * q4;
    }
  }
}

void RefQ8_K(const uint8_t* b, float* y) {
  float d;
  std::memcpy(&d, b, 4);
  for (int j = 0; j < 256; ++j) y[j] = d * static_cast<int8_t>(b[4 + j]);
}

struct LayoutCase {
  DType type;
  void (*ref)(const uint8_t*, float*);
  std::vector<size_t> half_offsets;  // fields holding half scales
  bool float_scale_at_0;             // Q8_K
};

const LayoutCase kCases[] = {
    {DType::kQ4_0, RefQ4_0, {0}, false},    {DType::kQ4_1, RefQ4_1, {0, 2}, false},
    {DType::kQ5_0, RefQ5_0, {0}, false},    {DType::kQ5_1, RefQ5_1, {0, 2}, false},
    {DType::kQ8_0, RefQ8_0, {0}, false},    {DType::kQ2_K, RefQ2_K, {80, 82}, false},
    {DType::kQ3_K, RefQ3_K, {108}, false},  {DType::kQ4_K, RefQ4_K, {0, 2}, false},
    {DType::kQ5_K, RefQ5_K, {0, 2}, false}, {DType::kQ6_K, RefQ6_K, {208}, false},
    {DType::kQ8_K, RefQ8_K, {}, true},
};

TEST(QuantLayoutTest, RandomBlocksMatchIndependentReferenceBitForBit) {
  std::mt19937 rng(2024);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(-2.0f, 2.0f);
  for (const LayoutCase& c : kCases) {
    const int64_t elems = Traits(c.type).block_elems;
    const size_t block_bytes = static_cast<size_t>(Traits(c.type).block_bytes);
    const int num_blocks = 5;
    std::vector<uint8_t> row(block_bytes * num_blocks);
    for (uint8_t& v : row) v = static_cast<uint8_t>(byte(rng));
    for (int b = 0; b < num_blocks; ++b) {
      for (size_t off : c.half_offsets) PutHalf(row, b * block_bytes + off, Fp32ToFp16(scale(rng)));
      if (c.float_scale_at_0) {
        const float d = scale(rng);
        std::memcpy(row.data() + b * block_bytes, &d, 4);
      }
    }
    const std::vector<float> got = Decode(c.type, row, elems * num_blocks);
    std::vector<float> want(got.size());
    for (int b = 0; b < num_blocks; ++b)
      c.ref(row.data() + b * block_bytes, want.data() + b * elems);
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(std::memcmp(&got[i], &want[i], 4), 0)
          << DTypeName(c.type) << " element " << i << ": got " << got[i] << " want " << want[i];
    }
  }
}

// ---- Hand-built blocks: expected values worked out by hand from the layout. ----

TEST(QuantLayoutTest, Q4_0HandBuilt) {
  std::vector<uint8_t> b(18, 0);
  PutHalf(b, 0, kHalfHalf);
  for (int j = 0; j < 16; ++j) b[2 + j] = static_cast<uint8_t>(j | (15 - j) << 4);
  const std::vector<float> y = Decode(DType::kQ4_0, b, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], (j - 8) * 0.5f) << j;       // low nibbles: elements 0..15
    EXPECT_EQ(y[j + 16], (7 - j) * 0.5f) << j;  // high nibbles: elements 16..31
  }
  EXPECT_EQ(y[0], -4.0f);
  EXPECT_EQ(y[16], 3.5f);
}

TEST(QuantLayoutTest, Q4_1HandBuilt) {
  std::vector<uint8_t> b(20, 0);
  PutHalf(b, 0, kHalfHalf);
  PutHalf(b, 2, kHalfMinusOne);
  for (int j = 0; j < 16; ++j) b[4 + j] = static_cast<uint8_t>(j | (15 - j) << 4);
  const std::vector<float> y = Decode(DType::kQ4_1, b, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], j * 0.5f - 1.0f) << j;
    EXPECT_EQ(y[j + 16], (15 - j) * 0.5f - 1.0f) << j;
  }
  EXPECT_EQ(y[30], -0.5f);  // high nibble of qs[14] = 1
  EXPECT_EQ(y[31], -1.0f);  // high nibble of qs[15] = 0
}

TEST(QuantLayoutTest, Q5_0HandBuilt) {
  std::vector<uint8_t> b(22, 0);
  PutHalf(b, 0, kHalfOne);
  // qh = 0x01FF00AA little-endian: bits 1,3,5,7 (elements 1,3,5,7), 16..23 and 24.
  b[2] = 0xAA;
  b[3] = 0x00;
  b[4] = 0xFF;
  b[5] = 0x01;
  for (int j = 0; j < 16; ++j) b[6 + j] = static_cast<uint8_t>(j | (15 - j) << 4);
  const std::vector<float> y = Decode(DType::kQ5_0, b, 32);
  EXPECT_EQ(y[0], -16.0f);   // 0 - 16
  EXPECT_EQ(y[1], 1.0f);     // (1 | 16) - 16
  EXPECT_EQ(y[2], -14.0f);   // 2 - 16
  EXPECT_EQ(y[7], 7.0f);     // (7 | 16) - 16
  EXPECT_EQ(y[8], -8.0f);    // bit 8 clear
  EXPECT_EQ(y[16], 15.0f);   // (15 | 16) - 16
  EXPECT_EQ(y[23], 8.0f);    // (8 | 16) - 16
  EXPECT_EQ(y[24], 7.0f);    // (7 | 16) - 16, bit 24 set
  EXPECT_EQ(y[25], -10.0f);  // 6 - 16, bit 25 clear
  EXPECT_EQ(y[31], -16.0f);  // 0 - 16
}

TEST(QuantLayoutTest, Q5_1HandBuilt) {
  std::vector<uint8_t> b(24, 0);
  PutHalf(b, 0, kHalfQuarter);
  PutHalf(b, 2, kHalfHalf);
  b[4] = 0xAA;
  b[6] = 0xFF;
  b[7] = 0x01;
  for (int j = 0; j < 16; ++j) b[8 + j] = static_cast<uint8_t>(j | (15 - j) << 4);
  const std::vector<float> y = Decode(DType::kQ5_1, b, 32);
  EXPECT_EQ(y[0], 0.5f);  // 0 * 0.25 + 0.5
  EXPECT_EQ(y[1], 17 * 0.25f + 0.5f);
  EXPECT_EQ(y[16], 31 * 0.25f + 0.5f);
  EXPECT_EQ(y[24], 23 * 0.25f + 0.5f);
  EXPECT_EQ(y[25], 6 * 0.25f + 0.5f);
}

TEST(QuantLayoutTest, Q8_0HandBuilt) {
  std::vector<uint8_t> b(34, 0);
  PutHalf(b, 0, kHalfEighth);
  for (int j = 0; j < 32; ++j) b[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(8 * j - 128));
  const std::vector<float> y = Decode(DType::kQ8_0, b, 32);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], static_cast<float>(j - 16)) << j;
}

TEST(QuantLayoutTest, Q2_KHandBuilt) {
  std::vector<uint8_t> b(84, 0);
  PutHalf(b, 80, kHalfOne);   // d
  PutHalf(b, 82, kHalfHalf);  // dmin
  b[0] = 0x21;                // sub-block 0: scale 1, min 2
  b[2] = 0x03;                // sub-block 2: scale 3, min 0
  b[4] = 0x15;                // sub-block 4: scale 5, min 1
  b[6] = 0x07;                // sub-block 6: scale 7, min 0
  b[9] = 0x42;                // sub-block 9: scale 2, min 4
  b[16 + 0] = 0xE4;           // qs[0]: elements 0, 32, 64, 96 get 0, 1, 2, 3
  b[16 + 49] = 0x02;          // qs[49] bits 0-1: element 128 + 16 + 1 = 145 gets 2
  const std::vector<float> y = Decode(DType::kQ2_K, b, 256);
  EXPECT_EQ(y[0], -1.0f);    // 1*0 - 0.5*2
  EXPECT_EQ(y[1], -1.0f);    // q = 0
  EXPECT_EQ(y[32], 3.0f);    // 3*1 - 0
  EXPECT_EQ(y[64], 9.5f);    // 5*2 - 0.5*1
  EXPECT_EQ(y[96], 21.0f);   // 7*3 - 0
  EXPECT_EQ(y[145], 2.0f);   // 2*2 - 0.5*4
  EXPECT_EQ(y[144], -2.0f);  // 2*0 - 0.5*4
  EXPECT_EQ(y[255], 0.0f);
}

TEST(QuantLayoutTest, Q3_KHandBuilt) {
  std::vector<uint8_t> b(110, 0);
  PutHalf(b, 108, kHalfOne);
  // scales: byte 0 = 0x21 -> low nibbles of scale 0 (1) and scale 8 (2); byte 4 = 0x05 -> scale 4
  // low nibble 5; byte 8 = 0xE4 -> top bits of scales 0, 4, 8, 12 = 0, 1, 2, 3.
  // Stored scales: s0 = 1, s4 = 21, s8 = 34, s12 = 48, all others 0; signed = stored - 32.
  b[96 + 0] = 0x21;
  b[96 + 4] = 0x05;
  b[96 + 8] = 0xE4;
  b[32 + 0] = 0x13;   // qs[0]: element 0 low bits 3, element 64 low bits 1
  b[32 + 32] = 0x32;  // qs[32]: element 128 low bits 2, element 192 low bits 3
  b[0] = 0x51;        // hmask[0]: bits 0 (element 0), 4 (element 128), 6 (element 192)
  const std::vector<float> y = Decode(DType::kQ3_K, b, 256);
  EXPECT_EQ(y[0], -93.0f);    // (1-32) * (3 - 0)
  EXPECT_EQ(y[1], 124.0f);    // (1-32) * (0 - 4)
  EXPECT_EQ(y[16], 128.0f);   // sub-block 1: (0-32) * (0 - 4)
  EXPECT_EQ(y[64], 33.0f);    // (21-32) * (1 - 4)
  EXPECT_EQ(y[128], 4.0f);    // (34-32) * (2 - 0)
  EXPECT_EQ(y[129], -8.0f);   // (34-32) * (0 - 4)
  EXPECT_EQ(y[192], 48.0f);   // (48-32) * (3 - 0)
  EXPECT_EQ(y[193], -64.0f);  // (48-32) * (0 - 4)
}

TEST(QuantLayoutTest, Q4_KHandBuilt) {
  std::vector<uint8_t> b(144, 0);
  PutHalf(b, 0, kHalfOne);  // d
  PutHalf(b, 2, kHalfOne);  // dmin
  b[4 + 0] = 0x41;          // scale 0 = 1; top bits of scale 4 = 1
  b[4 + 1] = 0x3F;          // scale 1 = 63
  b[4 + 4] = 0x82;          // min 0 = 2; top bits of min 4 = 2
  b[4 + 5] = 0x01;          // min 1 = 1
  b[4 + 8] = 0x53;          // scale 4 low = 3 (-> 19), min 4 low = 5 (-> 37)
  b[16 + 0] = 0x2A;         // element 0 = 10 (low nibble), element 32 = 2 (high nibble)
  b[16 + 64] = 0x07;        // element 128 = 7
  const std::vector<float> y = Decode(DType::kQ4_K, b, 256);
  EXPECT_EQ(y[0], 8.0f);      // 1*10 - 2
  EXPECT_EQ(y[1], -2.0f);     // 1*0 - 2
  EXPECT_EQ(y[32], 125.0f);   // 63*2 - 1
  EXPECT_EQ(y[128], 96.0f);   // 19*7 - 37
  EXPECT_EQ(y[129], -37.0f);  // 19*0 - 37
  EXPECT_EQ(y[160], 0.0f);    // sub-block 5: scale 0, min 0
}

TEST(QuantLayoutTest, Q5_KHandBuilt) {
  std::vector<uint8_t> b(176, 0);
  PutHalf(b, 0, kHalfOne);
  PutHalf(b, 2, kHalfOne);
  b[4 + 0] = 0x41;
  b[4 + 1] = 0x3F;
  b[4 + 4] = 0x82;
  b[4 + 5] = 0x01;
  b[4 + 8] = 0x53;
  b[16 + 0] = 0x11;  // qh[0]: bit 0 (element 0) and bit 4 (element 128)
  b[16 + 1] = 0x02;  // qh[1]: bit 1 (element 33)
  b[48 + 0] = 0x2A;
  b[48 + 64] = 0x07;
  const std::vector<float> y = Decode(DType::kQ5_K, b, 256);
  EXPECT_EQ(y[0], 24.0f);     // 1*(10+16) - 2
  EXPECT_EQ(y[32], 125.0f);   // 63*2 - 1
  EXPECT_EQ(y[33], 1007.0f);  // 63*16 - 1
  EXPECT_EQ(y[128], 400.0f);  // 19*(7+16) - 37
}

TEST(QuantLayoutTest, Q6_KHandBuilt) {
  std::vector<uint8_t> b(210, 0);
  PutHalf(b, 208, kHalfHalf);
  auto scale = [&](int j, int v) { b[192 + j] = static_cast<uint8_t>(static_cast<int8_t>(v)); };
  scale(0, -3);
  scale(2, 5);
  scale(4, 2);
  scale(8, 7);
  scale(15, -128);
  b[0] = 0x1F;         // ql[0]: element 0 low 15, element 64 low 1
  b[128 + 0] = 0x23;   // qh[0]: element 0 high 3, element 64 high 2
  b[64] = 0x05;        // ql[64]: element 128 low 5
  b[128 + 32] = 0x01;  // qh[32]: element 128 high 1
  b[127] = 0xF0;       // ql[127] high nibble: element 255 low 15
  b[128 + 63] = 0xC0;  // qh[63] bits 6-7: element 255 high 3
  const std::vector<float> y = Decode(DType::kQ6_K, b, 256);
  EXPECT_EQ(y[0], -46.5f);      // 0.5 * -3 * (63 - 32)
  EXPECT_EQ(y[32], -80.0f);     // 0.5 * 5 * (0 - 32)
  EXPECT_EQ(y[64], 1.0f);       // 0.5 * 2 * (33 - 32)
  EXPECT_EQ(y[128], -38.5f);    // 0.5 * 7 * (21 - 32)
  EXPECT_EQ(y[255], -1984.0f);  // 0.5 * -128 * (63 - 32)
}

TEST(QuantLayoutTest, Q8_KHandBuilt) {
  std::vector<uint8_t> b(292, 0);
  const float d = 0.25f;
  std::memcpy(b.data(), &d, 4);
  for (int j = 0; j < 256; ++j) b[4 + j] = static_cast<uint8_t>(static_cast<int8_t>(j - 128));
  const std::vector<float> y = Decode(DType::kQ8_K, b, 256);
  for (int j = 0; j < 256; ++j) EXPECT_EQ(y[j], (j - 128) * 0.25f) << j;
}

TEST(QuantLayoutTest, HalfAndBfloatRowsDecodeTheirBits) {
  const std::vector<uint8_t> f16 = {0x00, 0x3C, 0x00, 0xC0, 0x01, 0x00, 0x00, 0x7C};
  const std::vector<float> y = Decode(DType::kF16, f16, 4);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], -2.0f);
  EXPECT_EQ(y[2], 0x1p-24f);  // smallest subnormal half
  EXPECT_EQ(y[3], INFINITY);
  const std::vector<uint8_t> bf16 = {0x80, 0x3F, 0x49, 0x40};
  const std::vector<float> z = Decode(DType::kBF16, bf16, 2);
  EXPECT_EQ(z[0], 1.0f);
  EXPECT_EQ(z[1], 3.140625f);
}

}  // namespace
}  // namespace ds::tensor
