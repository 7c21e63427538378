#include "kernels/dispatch.h"

#if defined(DS_KERNELS_X86)
#include <cpuid.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#endif
#if defined(DS_KERNELS_ARM) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/check.h"
#include "base/log.h"

namespace ds::kernels {
namespace internal {
namespace {

#if defined(DS_KERNELS_X86)
const KernelTable& AmxTable() {
  static const KernelTable table = [] {
    KernelTable t = avx512_bf16::GetTable();
    t.name = "avx512_amx";
    t.wide_q8 = amx::WidePathFor;
    return t;
  }();
  return table;
}

// Whether the CPU has AMX-TILE and AMX-INT8 and Linux lets this process use the tile data, which
// it keeps off until asked (arch_prctl ARCH_REQ_XCOMP_PERM); asked once, for every thread.
bool AmxUsable() {
  static const bool usable = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
    constexpr unsigned kAmxTile = 1u << 24, kAmxInt8 = 1u << 25;
    if ((edx & kAmxTile) == 0 || (edx & kAmxInt8) == 0) return false;
#if defined(__linux__)
    constexpr int kArchReqXcompPerm = 0x1023;
    constexpr int kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
    return false;
#endif
  }();
  return usable;
}
#endif

const KernelTable& TableFor(Isa isa) {
  switch (isa) {
#if defined(DS_KERNELS_X86)
    case Isa::kAvx2:
      return avx2::GetTable();
    case Isa::kAvx512:
      return avx512::GetTable();
    case Isa::kAvx512Bf16:
      return avx512_bf16::GetTable();
    case Isa::kAvx512Amx:
      return AmxTable();
#endif
#if defined(DS_KERNELS_ARM)
    case Isa::kNeon:
      return neon::GetTable();
    case Isa::kNeonDotprod:
      return neon_dotprod::GetTable();
#endif
    default:
      return GenericTable();
  }
}

Isa BestIsa() {
  Isa best = Isa::kScalar;
  for (Isa isa : SupportedIsas()) best = isa;  // ordered from least to most capable
  return best;
}

Isa InitialIsa() {
  Isa isa = BestIsa();
  const char* forced = std::getenv("DS_KERNELS_ISA");
  if (forced == nullptr || *forced == '\0') return isa;
  std::optional<Isa> parsed = ParseIsa(forced);
  if (!parsed || !CpuSupports(*parsed)) {
    DS_LOG_WARN("DS_KERNELS_ISA={} is unknown or unsupported by this CPU; using {}", forced,
                IsaName(isa));
    return isa;
  }
  return *parsed;
}

// Ordered from least to most capable.
constexpr Isa kAllIsas[] = {Isa::kScalar,     Isa::kAvx2, Isa::kAvx512,     Isa::kAvx512Bf16,
                            Isa::kAvx512Amx, Isa::kNeon, Isa::kNeonDotprod};

std::atomic<const KernelTable*> g_table{nullptr};
std::atomic<Isa> g_isa{Isa::kScalar};

}  // namespace

std::string_view IsaName(Isa isa) {
  switch (isa) {
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
    case Isa::kAvx512Bf16:
      return "avx512_bf16";
    case Isa::kAvx512Amx:
      return "avx512_amx";
    case Isa::kNeon:
      return "neon";
    case Isa::kNeonDotprod:
      return "neon_dotprod";
    case Isa::kScalar:
      break;
  }
  return "scalar";
}

std::optional<Isa> ParseIsa(std::string_view name) {
  for (Isa isa : kAllIsas) {
    if (IsaName(isa) == name) return isa;
  }
  return std::nullopt;
}

bool AsksForInterleavedLines(std::string_view cpu_vendor) { return cpu_vendor == "GenuineIntel"; }

bool InterleavedPassesAskForLines() {
  static const bool asks = [] {
#if defined(DS_KERNELS_X86)
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return false;
    // The vendor string's 12 bytes are ebx, edx, ecx in that order.
    char vendor[12];
    std::memcpy(vendor, &ebx, 4);
    std::memcpy(vendor + 4, &edx, 4);
    std::memcpy(vendor + 8, &ecx, 4);
    return AsksForInterleavedLines(std::string_view(vendor, sizeof vendor));
#else
    return false;
#endif
  }();
  return asks;
}

bool CpuSupports(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return true;
#if defined(DS_KERNELS_X86)
    case Isa::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             __builtin_cpu_supports("f16c");
    case Isa::kAvx512:
      return CpuSupports(Isa::kAvx2) && __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vnni");
    case Isa::kAvx512Bf16:
      return CpuSupports(Isa::kAvx512) && __builtin_cpu_supports("avx512bf16");
    case Isa::kAvx512Amx:
      return CpuSupports(Isa::kAvx512Bf16) && AmxUsable();
#endif
#if defined(DS_KERNELS_ARM)
    case Isa::kNeon:
      return true;
    case Isa::kNeonDotprod:
#if defined(__linux__)
      return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
#else
      return false;
#endif
#endif
    default:
      return false;
  }
}

std::vector<Isa> SupportedIsas() {
  std::vector<Isa> out;
  for (Isa isa : kAllIsas) {
    if (CpuSupports(isa)) out.push_back(isa);
  }
  return out;
}

void SetIsa(Isa isa) {
  DS_CHECK(CpuSupports(isa));
  g_isa.store(isa);
  g_table.store(&TableFor(isa));
}

const KernelTable& Table() {
  const KernelTable* table = g_table.load(std::memory_order_acquire);
  if (table != nullptr) return *table;
  static const bool initialised = [] {
    SetIsa(InitialIsa());
    return true;
  }();
  (void)initialised;
  return *g_table.load(std::memory_order_acquire);
}

Isa CurrentIsa() {
  Table();
  return g_isa.load();
}

}  // namespace internal

std::string_view ActiveIsa() { return internal::IsaName(internal::CurrentIsa()); }

}  // namespace ds::kernels
