// Which CPU a benchmark ran on, for its report: figures from one machine say little about another
// (the same code decodes at different shares of the memory floor on AMD and Intel machines), and
// virtual machines often name their CPU only generically ("Intel(R) Xeon(R) Processor"), so on
// x86 the report adds cpuid's family and model, which tell the generation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ds::apps {

// The value of the first "model name" line of /proc/cpuinfo's text, trimmed; nullopt without one
// (AArch64 kernels print none).
std::optional<std::string> ParseCpuModelName(std::string_view cpuinfo);

// cpuid leaf 1's family and model as vendors' manuals number them: the extended family is added
// to a base family of 15, and the extended model prefixes the base model in families 6 and 15.
struct CpuFamilyModel {
  int family = 0;
  int model = 0;
};
CpuFamilyModel DecodeCpuSignature(uint32_t leaf1_eax);

// One line for a report: the model name (or "unknown CPU"), cpuid's family and model on x86, and
// the number of online CPUs, e.g. "Intel(R) Xeon(R) Processor (family 6, model 207), 2 online
// CPUs".
std::string DescribeCpu();

}  // namespace ds::apps
