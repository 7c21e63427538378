// Internal to the kernels library (and its tests): which instruction set the kernels use. The
// choice is made once, on first use, from the CPU's features (cpuid, or the kernel's hwcaps on
// AArch64) and the DS_KERNELS_ISA environment variable (scalar, avx2, avx512, avx512_bf16,
// avx512_amx, neon or neon_dotprod; an unsupported or unknown value is ignored with a warning).
// Tests call SetIsa to run every kernel under each path the CPU supports.
// Thread safety: Table() may be called from any thread; SetIsa must not race with running kernels.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "kernels/kernel_table.h"

namespace ds::kernels::internal {

enum class Isa {
  kScalar,       // portable C++ (GenericTable)
  kAvx2,         // AVX2 + FMA + F16C
  kAvx512,       // AVX-512 F/BW/VL/DQ/VNNI
  kAvx512Bf16,   // those and AVX512_BF16
  kAvx512Amx,    // those and AMX-INT8 tiles, once the OS grants them to the process
  kNeon,         // AArch64 Advanced SIMD, which every AArch64 CPU has
  kNeonDotprod,  // NEON with the ARMv8.2 dot-product instructions (SDOT)
};

std::string_view IsaName(Isa isa);
std::optional<Isa> ParseIsa(std::string_view name);
bool CpuSupports(Isa isa);
// Every Isa CpuSupports, scalar first.
std::vector<Isa> SupportedIsas();

// Whether a one-token pass over interleaved rows takes InterleavedPath::tile_asking_for_lines:
// on Intel CPUs, where the hardware prefetchers alone left such a stream at about half the
// memory's bandwidth, and not on AMD's, where the requests slowed it (x86/interleaved_rows.inc
// has the figures). Read from cpuid once.
bool InterleavedPassesAskForLines();
// That rule, by cpuid's vendor string.
bool AsksForInterleavedLines(std::string_view cpu_vendor);

// Selects the table every kernel uses from now on. REQUIRES: CpuSupports(isa).
void SetIsa(Isa isa);
Isa CurrentIsa();
const KernelTable& Table();

}  // namespace ds::kernels::internal
