#include "base/file_text.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace ds {
namespace {

TEST(FileTextTest, ReadsEveryByte) {
  const std::string path = testing::TempDir() + "file_text_test.bin";
  const std::string bytes("line one\nsecond\0line\r\n", 23);
  std::ofstream(path, std::ios::binary) << bytes;
  const StatusOr<std::string> text = ReadFileText(path);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, bytes);
  std::remove(path.c_str());
}

TEST(FileTextTest, AMissingFileIsNotFound) {
  const std::string path = testing::TempDir() + "file_text_test_missing";
  const StatusOr<std::string> text = ReadFileText(path);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(text.status().message(), path + ": cannot open");
}

}  // namespace
}  // namespace ds
