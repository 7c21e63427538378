// The baseline NEON (ARMv8-A Advanced SIMD) kernel table: every AArch64 CPU can run it. Int8
// dot products take pairs of widening multiplies (see DotI8).

#include <arm_neon.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/kernel_table.h"
#include "kernels/kv_stream.h"
#include "tensor/blocks.h"

namespace ds::kernels::internal::neon {
namespace {

constexpr const char* kTableName = "neon";

#include "kernels/arm/kernels.inc"

}  // namespace

#include "kernels/simd/table.inc"

}  // namespace ds::kernels::internal::neon
