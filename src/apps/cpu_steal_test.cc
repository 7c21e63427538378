#include "apps/cpu_steal.h"

#include <gtest/gtest.h>

namespace ds::apps {
namespace {

TEST(CpuStealTest, ReadsTheTotalAndStealOfTheFirstCpuLine) {
  const std::optional<CpuTicks> ticks = ParseCpuTicks(
      "cpu  100 2 30 400 5 0 6 70 9 0\n"
      "cpu0 50 1 15 200 2 0 3 35 4 0\n"
      "intr 12345\n");
  ASSERT_TRUE(ticks.has_value());
  // Guest time (9) is part of user time already.
  EXPECT_EQ(ticks->total, 100 + 2 + 30 + 400 + 5 + 0 + 6 + 70);
  EXPECT_EQ(ticks->steal, 70);
}

TEST(CpuStealTest, FindsTheLineAnywhereAndAcceptsKernelsWithoutSteal) {
  const std::optional<CpuTicks> ticks = ParseCpuTicks("btime 1\ncpu 10 0 5 85\n");
  ASSERT_TRUE(ticks.has_value());
  EXPECT_EQ(ticks->total, 100);
  EXPECT_EQ(ticks->steal, 0);
}

TEST(CpuStealTest, RejectsTextWithoutAWellFormedCpuLine) {
  EXPECT_FALSE(ParseCpuTicks("").has_value());
  EXPECT_FALSE(ParseCpuTicks("cpu0 1 2 3 4\n").has_value());
  EXPECT_FALSE(ParseCpuTicks("cpu 1 2\n").has_value());
  EXPECT_FALSE(ParseCpuTicks("cpu 1 x 3 4\n").has_value());
  EXPECT_FALSE(ParseCpuTicks("cpu 1 -2 3 4\n").has_value());
}

TEST(CpuStealTest, MeterAddsTheIntervalsItWasGiven) {
  StealMeter meter;
  EXPECT_FALSE(meter.StolenShare().has_value());
  if (!ReadCpuTicks().has_value()) GTEST_SKIP() << "no /proc/stat on this system";
  meter.Begin();
  // Spin until the CPUs' clock has advanced a tick or more.
  const int64_t start = ReadCpuTicks()->total;
  while (ReadCpuTicks()->total == start) {
  }
  meter.End();
  const std::optional<double> share = meter.StolenShare();
  ASSERT_TRUE(share.has_value());
  EXPECT_GE(*share, 0.0);
  EXPECT_LE(*share, 1.0);
}

}  // namespace
}  // namespace ds::apps
