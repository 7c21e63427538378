// The AVX2 + FMA + F16C kernel table. This file alone is compiled with -mavx2 -mfma -mf16c (see
// CMakeLists.txt), and dispatch.cc hands its table out only after cpuid confirms the CPU has
// them. Everything here has internal linkage and calls no inline function of a shared header:
// an inline function emitted with these flags could be the copy the linker keeps for baseline
// code.

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/kernel_table.h"
#include "tensor/blocks.h"

namespace ds::kernels::internal::avx2 {
namespace {

constexpr const char* kTableName = "avx2";

#include "kernels/x86/kernels.inc"

}  // namespace

#include "kernels/simd/table.inc"

}  // namespace ds::kernels::internal::avx2
