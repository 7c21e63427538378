// The file-system steps of the disk tier against hostile neighbours: directories another user
// owns or can write are refused, and entries named like records that are symlinks or FIFOs
// neither redirect nor hang a reader.
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

  // Gives `path` to another user; false when this process may not (not root).
  static bool GiveAway(const fs::path& path) {
    return ::chown(path.c_str(), kNobody, kNobody) == 0;
  }

  static fs::perms Mode(const fs::path& path) { return fs::status(path).permissions(); }

  static constexpr uid_t kNobody = 65534;
  fs::path dir_;
};

TEST_F(DiskFilesTest, DirectoriesOthersCanWriteAreRefusedNotRepaired) {
  for (mode_t mode : {0777, 0770, 0720}) {
    const fs::path model = dir_ / "model";
    ASSERT_EQ(::chmod(model.c_str(), mode), 0);
    Status status = EnsurePrivateDirectory(model.string());
    EXPECT_EQ(status.code(), StatusCode::kUnavailable) << std::oct << mode;
    EXPECT_NE(status.message().find("writable by group or others"), std::string::npos)
        << status.message();
    EXPECT_NE(status.message().find(model.string()), std::string::npos) << status.message();
    EXPECT_EQ(static_cast<mode_t>(Mode(model)), mode) << "left as found";
  }
}

TEST_F(DiskFilesTest, DirectoriesOfAnotherUserAreRefused) {
  if (!GiveAway(dir_ / "model")) GTEST_SKIP() << "needs root to give a directory away";
  Status status = EnsurePrivateDirectory((dir_ / "model").string());
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("owned by uid 65534"), std::string::npos) << status.message();
  EXPECT_FALSE(EnsureCacheRoot((dir_ / "model").string()).ok()) << "nor as the cache's root";
}

TEST_F(DiskFilesTest, OwnDirectoriesAreTightenedAndMadeWhenMissing) {
  ASSERT_EQ(::chmod((dir_ / "model").c_str(), 0755), 0);
  ASSERT_TRUE(EnsurePrivateDirectory((dir_ / "model").string()).ok());
  EXPECT_EQ(Mode(dir_ / "model"), fs::perms::owner_all) << "readable by others no more";
  ASSERT_TRUE(EnsurePrivateDirectory((dir_ / "new" / "tmp").string()).ok());
  EXPECT_EQ(Mode(dir_ / "new"), fs::perms::owner_all);
  EXPECT_EQ(Mode(dir_ / "new" / "tmp"), fs::perms::owner_all);
}

TEST_F(DiskFilesTest, TheCacheRootWeOwnIsTightenedWhateverItsMode) {
  const fs::path root = dir_ / "root";
  fs::create_directories(root);
  ASSERT_EQ(::chmod(root.c_str(), 0777), 0);
  ASSERT_TRUE(EnsureCacheRoot(root.string()).ok());
  EXPECT_EQ(Mode(root), fs::perms::owner_all);
  // The user may name a symlink as --cache-dir; its target is what is checked.
  fs::create_directory_symlink(root, dir_ / "link");
  EXPECT_TRUE(EnsureCacheRoot((dir_ / "link").string()).ok());
  if (!GiveAway(root)) GTEST_SKIP() << "needs root to give a directory away";
  EXPECT_FALSE(EnsureCacheRoot(root.string()).ok());
  EXPECT_FALSE(EnsureCacheRoot((dir_ / "link").string()).ok());
}

TEST_F(DiskFilesTest, ASymlinkWhereTheCacheMakesItsOwnDirectoryIsRefused) {
  fs::create_directory_symlink(dir_ / "elsewhere", dir_ / "model" / "tmp");
  Status status = EnsurePrivateDirectory((dir_ / "model" / "tmp").string());
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("symbolic link"), std::string::npos) << status.message();
}

TEST_F(DiskFilesTest, QuarantineDeletesWhatItCannotMoveSomewherePrivate) {
  const std::string model = (dir_ / "model").string();
  const std::string name = RecordFileName(false, testing::WriteBlockRecord(model, 1).key);
  fs::create_directories(dir_ / "model" / kQuarantineDirName);
  ASSERT_EQ(::chmod((dir_ / "model" / kQuarantineDirName).c_str(), 0777), 0);
  Quarantine(model, name);
  EXPECT_FALSE(fs::exists(dir_ / "model" / name));
  EXPECT_FALSE(fs::exists(dir_ / "model" / kQuarantineDirName / name))
      << "moved where another user can read or replace it";
}

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
