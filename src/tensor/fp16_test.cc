// Exhaustive checks of the half and bfloat16 conversions in tensor/fp16.h: every one of the 65536
// bit patterns of each, and every rounding midpoint between neighbouring finite values.
#include "tensor/fp16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

namespace ds::tensor {
namespace {

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

bool IsHalfNan(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x03ff) != 0; }

// The value of a half from its definition, computed in double.
double HalfValue(uint16_t h) {
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exp == 0) return sign * std::ldexp(mant, -24);
  if (exp == 31) return sign * INFINITY;
  return sign * std::ldexp(1024 + mant, exp - 25);
}

TEST(Fp16Test, EveryHalfDecodesToItsValue) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = Fp16ToFp32(static_cast<uint16_t>(h));
    if (IsHalfNan(static_cast<uint16_t>(h))) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      ASSERT_EQ(Bits(f) >> 31, h >> 15) << std::hex << h;
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), HalfValue(static_cast<uint16_t>(h))) << std::hex << h;
    ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << std::hex << h;  // -0 stays -0
  }
}

TEST(Fp16Test, EveryHalfSurvivesARoundTripThroughFloat) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint16_t back = Fp32ToFp16(Fp16ToFp32(static_cast<uint16_t>(h)));
    if (IsHalfNan(static_cast<uint16_t>(h))) {
      ASSERT_TRUE(IsHalfNan(back)) << std::hex << h;
    } else {
      ASSERT_EQ(back, h) << std::hex << h;
    }
  }
}

TEST(Fp16Test, MidpointsRoundToEvenAndNeighboursRoundToNearest) {
  // Consecutive finite magnitudes a = h, b = h + 1 (subnormals included, and 65504 -> inf).
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    for (uint32_t sign : {0u, 0x8000u}) {
      const uint16_t lo = static_cast<uint16_t>(h | sign);
      const uint16_t hi = static_cast<uint16_t>((h + 1) | sign);
      const double a = HalfValue(lo);
      const double b = (h + 1 == 0x7c00) ? (sign ? -65536.0 : 65536.0) : HalfValue(hi);
      const float mid = static_cast<float>((a + b) / 2);  // exact: halves have 11-bit mantissas
      ASSERT_EQ(static_cast<double>(mid), (a + b) / 2);
      const uint16_t even = (h & 1) ? hi : lo;
      ASSERT_EQ(Fp32ToFp16(mid), even) << std::hex << lo;
      // One float ulp of magnitude either side of the midpoint decides it.
      ASSERT_EQ(Fp32ToFp16(FromBits(Bits(mid) - 1)), lo) << std::hex << lo;
      ASSERT_EQ(Fp32ToFp16(FromBits(Bits(mid) + 1)), hi) << std::hex << lo;
    }
  }
}

TEST(Fp16Test, SpecialValues) {
  EXPECT_EQ(Fp32ToFp16(INFINITY), 0x7c00);
  EXPECT_EQ(Fp32ToFp16(-INFINITY), 0xfc00);
  EXPECT_EQ(Fp32ToFp16(1e10f), 0x7c00);
  EXPECT_EQ(Fp32ToFp16(65519.996f), 0x7bff);  // just under the 65504/65536 midpoint
  EXPECT_EQ(Fp32ToFp16(65520.0f), 0x7c00);    // the midpoint rounds to even: inf
  EXPECT_TRUE(IsHalfNan(Fp32ToFp16(NAN)));
  EXPECT_TRUE(IsHalfNan(Fp32ToFp16(-NAN)));
  EXPECT_EQ(Fp32ToFp16(0x1p-25f), 0x0000);  // half of the smallest subnormal: ties to 0
  EXPECT_EQ(Fp32ToFp16(std::nextafter(0x1p-25f, 1.0f)), 0x0001);
  EXPECT_EQ(Fp32ToFp16(1e-30f), 0x0000);
  EXPECT_EQ(Fp32ToFp16(-1e-30f), 0x8000);
  EXPECT_EQ(Fp32ToFp16(-0.0f), 0x8000);
  EXPECT_EQ(Fp32ToFp16(0x1p-14f), 0x0400);  // smallest normal
  EXPECT_EQ(Fp32ToFp16(1.0f), 0x3c00);
}

TEST(Bf16Test, EveryBfloatSurvivesARoundTripThroughFloat) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = Bf16ToFp32(static_cast<uint16_t>(h));
    ASSERT_EQ(Bits(f), h << 16) << std::hex << h;
    const uint16_t back = Fp32ToBf16(f);
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(Bf16ToFp32(back))) << std::hex << h;
      ASSERT_EQ(back & 0x8000, h & 0x8000) << std::hex << h;
    } else {
      ASSERT_EQ(back, h) << std::hex << h;
    }
  }
}

TEST(Bf16Test, MidpointsRoundToEvenAndNeighboursRoundToNearest) {
  // Every finite magnitude up to the largest (whose upper midpoint rounds to inf).
  for (uint32_t h = 0; h < 0x7f80; ++h) {
    for (uint32_t sign : {0u, 0x8000u}) {
      const uint32_t lo = h | sign;
      const uint32_t mid_bits = (lo << 16) | 0x8000;
      const uint16_t up = static_cast<uint16_t>((h + 1) | sign);
      ASSERT_EQ(Fp32ToBf16(FromBits(mid_bits)), (h & 1) ? up : lo) << std::hex << lo;
      ASSERT_EQ(Fp32ToBf16(FromBits(mid_bits - 1)), lo) << std::hex << lo;
      ASSERT_EQ(Fp32ToBf16(FromBits(mid_bits + 1)), up) << std::hex << lo;
    }
  }
}

TEST(Bf16Test, NanStaysQuietNan) {
  // A signalling NaN whose payload sits only in the low 16 bits must not truncate to infinity.
  const uint16_t b = Fp32ToBf16(FromBits(0x7f800001u));
  EXPECT_TRUE(std::isnan(Bf16ToFp32(b)));
  EXPECT_EQ(Fp32ToBf16(INFINITY), 0x7f80);
  EXPECT_EQ(Fp32ToBf16(-INFINITY), 0xff80);
}

}  // namespace
}  // namespace ds::tensor
