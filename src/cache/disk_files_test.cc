// The file-system steps of the disk tier against hostile neighbours: entries named like records
// that are symlinks or FIFOs neither redirect nor hang a reader.
#include "cache/disk_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "cache/disk_files_test_util.h"

namespace ds::cache {
namespace {

namespace fs = std::filesystem;

class DiskFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("disk_files_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "model");
    fs::create_directories(dir_ / "elsewhere");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  fs::path dir_;
};

TEST_F(DiskFilesTest, AFifoNamedLikeARecordNeitherHangsNorPassesForOne) {
  const fs::path fifo = dir_ / "model" / "b-x.rec";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::vector<ScannedRecord> scanned;
  EXPECT_TRUE(testing::ReturnsInTime([&] { scanned = ScanRecords((dir_ / "model").string()); },
                                     fifo.string()));
  ASSERT_EQ(scanned.size(), 1u);
  EXPECT_EQ(scanned[0].status.code(), StatusCode::kUnavailable) << scanned[0].status.ToString();
  EXPECT_NE(scanned[0].status.message().find("FIFO"), std::string::npos)
      << scanned[0].status.message();

  DiskRecordMeta meta;
  std::vector<uint8_t> payload;
  Status read;
  EXPECT_TRUE(testing::ReturnsInTime(
      [&] { read = ReadRecord(fifo.string(), /*verify_payload=*/true, &meta, &payload); },
      fifo.string()));
  EXPECT_EQ(read.code(), StatusCode::kUnavailable) << read.ToString();
}

TEST_F(DiskFilesTest, ASymlinkNamedLikeARecordIsNotFollowed) {
  const DiskRecordMeta target = testing::WriteBlockRecord((dir_ / "elsewhere").string(), 7);
  const std::string name = RecordFileName(false, target.key);
  fs::create_symlink(dir_ / "elsewhere" / name, dir_ / "model" / name);

  std::vector<ScannedRecord> scanned = ScanRecords((dir_ / "model").string());
  ASSERT_EQ(scanned.size(), 1u);
  EXPECT_EQ(scanned[0].status.code(), StatusCode::kUnavailable) << scanned[0].status.ToString();
  EXPECT_FALSE(scanned[0].meta.key == target.key) << "the link was followed";

  DiskRecordMeta meta;
  std::vector<uint8_t> payload;
  Status read = ReadRecord((dir_ / "model" / name).string(), true, &meta, &payload);
  EXPECT_EQ(read.code(), StatusCode::kUnavailable) << read.ToString();
  EXPECT_TRUE(payload.empty());
  ASSERT_TRUE(ReadRecord((dir_ / "elsewhere" / name).string(), true, &meta, &payload).ok())
      << "the same file read directly is a good record";
}

}  // namespace
}  // namespace ds::cache
