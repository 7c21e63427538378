// How much CPU time the host took from this machine's CPUs (steal), read from Linux's
// /proc/stat: on a virtual machine whose vCPUs share cores with other guests, a benchmark's
// threads can run at a fraction of their speed, and its figures then say less about the code.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ds::apps {

// Cumulative CPU time of all CPUs, in the kernel's clock ticks.
struct CpuTicks {
  int64_t total = 0;  // every state, steal included
  int64_t steal = 0;  // runnable but not run by the host
};

// The first ("cpu ") line of /proc/stat's text; nullopt when it has no such line or it is
// malformed. Kernels before 2.6.11 have no steal field: then steal is 0.
std::optional<CpuTicks> ParseCpuTicks(std::string_view proc_stat);

// The machine's ticks now; nullopt where /proc/stat cannot be read (not Linux).
std::optional<CpuTicks> ReadCpuTicks();

// Accumulates ticks over timed intervals: Begin() before one, End() after it.
class StealMeter {
 public:
  void Begin();
  void End();
  // Steal over the intervals as a share of all CPU time in them; nullopt when nothing was read.
  std::optional<double> StolenShare() const;

 private:
  std::optional<CpuTicks> start_;
  CpuTicks sum_;
};

}  // namespace ds::apps
