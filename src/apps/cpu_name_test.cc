#include "apps/cpu_name.h"

#include <gtest/gtest.h>

namespace ds::apps {
namespace {

TEST(CpuNameTest, TakesTheFirstModelNameLineTrimmed) {
  EXPECT_EQ(ParseCpuModelName("processor\t: 0\n"
                              "vendor_id\t: GenuineIntel\n"
                              "model name\t: Intel(R) Xeon(R) Processor  \n"
                              "processor\t: 1\n"
                              "model name\t: Other\n"),
            "Intel(R) Xeon(R) Processor");
  EXPECT_EQ(ParseCpuModelName("model name : AMD EPYC 9R14 96-Core Processor"),
            "AMD EPYC 9R14 96-Core Processor");
}

TEST(CpuNameTest, HasNoNameWithoutAModelNameLine) {
  EXPECT_FALSE(ParseCpuModelName("").has_value());
  EXPECT_FALSE(ParseCpuModelName("processor : 0\nCPU part : 0xd0c\n").has_value());
  EXPECT_FALSE(ParseCpuModelName("model name:\n").has_value());
  EXPECT_FALSE(ParseCpuModelName("model : 207\n").has_value());
}

TEST(CpuNameTest, DecodesFamilyAndModelAsTheManualsNumberThem) {
  // An Intel Xeon of family 6, model 207 (0xcf), stepping 2.
  const CpuFamilyModel intel = DecodeCpuSignature(0x000c06f2);
  EXPECT_EQ(intel.family, 6);
  EXPECT_EQ(intel.model, 207);
  // An AMD Zen 4: family 0xf + 0xa = 25, model 0x11.
  const CpuFamilyModel zen4 = DecodeCpuSignature(0x00a10f11);
  EXPECT_EQ(zen4.family, 25);
  EXPECT_EQ(zen4.model, 17);
  // Below family 6 the extended fields do not count.
  const CpuFamilyModel old = DecodeCpuSignature(0x000f0543);
  EXPECT_EQ(old.family, 5);
  EXPECT_EQ(old.model, 4);
}

TEST(CpuNameTest, DescribesThisMachine) {
  const std::string line = DescribeCpu();
  EXPECT_FALSE(line.empty());
  EXPECT_NE(line.find("online CPU"), std::string::npos) << line;
}

}  // namespace
}  // namespace ds::apps
