#include "apps/cpu_steal.h"

#include <charconv>
#include <string>

#include "base/file_text.h"

namespace ds::apps {

std::optional<CpuTicks> ParseCpuTicks(std::string_view proc_stat) {
  constexpr std::string_view kPrefix = "cpu ";
  size_t line_start = 0;
  while (line_start < proc_stat.size() &&
         proc_stat.substr(line_start, kPrefix.size()) != kPrefix) {
    const size_t newline = proc_stat.find('\n', line_start);
    if (newline == std::string_view::npos) return std::nullopt;
    line_start = newline + 1;
  }
  if (line_start >= proc_stat.size()) return std::nullopt;
  std::string_view line = proc_stat.substr(line_start);
  line = line.substr(0, line.find('\n'));
  line.remove_prefix(kPrefix.size());
  // user nice system idle iowait irq softirq steal guest guest_nice: guest time is already
  // counted in user and nice, so the total stops at steal.
  constexpr int kStealField = 7;
  CpuTicks ticks;
  int field = 0;
  while (field <= kStealField) {
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (line.empty()) break;
    int64_t value = 0;
    const auto [end, error] = std::from_chars(line.data(), line.data() + line.size(), value);
    if (error != std::errc() || value < 0) return std::nullopt;
    line.remove_prefix(static_cast<size_t>(end - line.data()));
    ticks.total += value;
    if (field == kStealField) ticks.steal = value;
    ++field;
  }
  // user, nice, system and idle are always there.
  if (field < 4) return std::nullopt;
  return ticks;
}

std::optional<CpuTicks> ReadCpuTicks() {
  const StatusOr<std::string> text = ReadFileText("/proc/stat");
  if (!text.ok()) return std::nullopt;
  return ParseCpuTicks(*text);
}

void StealMeter::Begin() { start_ = ReadCpuTicks(); }

void StealMeter::End() {
  if (!start_) return;
  const std::optional<CpuTicks> now = ReadCpuTicks();
  if (now && now->total >= start_->total && now->steal >= start_->steal) {
    sum_.total += now->total - start_->total;
    sum_.steal += now->steal - start_->steal;
  }
  start_.reset();
}

std::optional<double> StealMeter::StolenShare() const {
  if (sum_.total <= 0) return std::nullopt;
  return static_cast<double>(sum_.steal) / static_cast<double>(sum_.total);
}

}  // namespace ds::apps
