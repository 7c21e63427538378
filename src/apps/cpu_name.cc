#include "apps/cpu_name.h"

#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "base/file_text.h"

namespace ds::apps {
namespace {

std::string_view Trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

std::optional<std::string> ParseCpuModelName(std::string_view cpuinfo) {
  while (!cpuinfo.empty()) {
    const size_t newline = cpuinfo.find('\n');
    const std::string_view line = cpuinfo.substr(0, newline);
    cpuinfo = newline == std::string_view::npos ? std::string_view() : cpuinfo.substr(newline + 1);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || Trimmed(line.substr(0, colon)) != "model name") {
      continue;
    }
    const std::string_view name = Trimmed(line.substr(colon + 1));
    if (name.empty()) return std::nullopt;
    return std::string(name);
  }
  return std::nullopt;
}

CpuFamilyModel DecodeCpuSignature(uint32_t leaf1_eax) {
  const int base_family = static_cast<int>((leaf1_eax >> 8) & 0xf);
  const int base_model = static_cast<int>((leaf1_eax >> 4) & 0xf);
  const int extended_family = static_cast<int>((leaf1_eax >> 20) & 0xff);
  const int extended_model = static_cast<int>((leaf1_eax >> 16) & 0xf);
  CpuFamilyModel out;
  out.family = base_family == 0xf ? base_family + extended_family : base_family;
  out.model = base_family == 0x6 || base_family == 0xf ? (extended_model << 4) | base_model
                                                       : base_model;
  return out;
}

std::string DescribeCpu() {
  std::string line = "unknown CPU";
  if (const StatusOr<std::string> text = ReadFileText("/proc/cpuinfo"); text.ok()) {
    if (std::optional<std::string> name = ParseCpuModelName(*text)) line = *name;
  }
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
    const CpuFamilyModel fm = DecodeCpuSignature(eax);
    line += " (family " + std::to_string(fm.family) + ", model " + std::to_string(fm.model) + ")";
  }
#endif
  const unsigned online = std::thread::hardware_concurrency();
  if (online > 0) {
    line += ", " + std::to_string(online) + (online == 1 ? " online CPU" : " online CPUs");
  }
  return line;
}

}  // namespace ds::apps
