// The NEON table with the ARMv8.2 dot-product instructions (SDOT). This file alone is compiled
// with -march=armv8.2-a+dotprod (see CMakeLists.txt), and dispatch.cc hands its table out only
// after the kernel reports asimddp. Everything here has internal linkage and calls no inline
// function of a shared header: an inline function emitted with these flags could be the copy the
// linker keeps for baseline code.

#include <arm_neon.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/kernel_table.h"
#include "kernels/kv_stream.h"
#include "tensor/blocks.h"

namespace ds::kernels::internal::neon_dotprod {
namespace {

constexpr const char* kTableName = "neon_dotprod";

#include "kernels/arm/kernels.inc"

}  // namespace

#include "kernels/simd/table.inc"

}  // namespace ds::kernels::internal::neon_dotprod
