// The AVX-512 (F, BW, VL, VNNI) kernel table. This file alone is compiled with -mavx512f etc. (see
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

namespace ds::kernels::internal::avx512 {
namespace {

constexpr const char* kTableName = "avx512";

#include "kernels/x86/kernels.inc"

}  // namespace

#include "kernels/simd/table.inc"

}  // namespace ds::kernels::internal::avx512
