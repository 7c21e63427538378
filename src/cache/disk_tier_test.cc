// The disk tier without a model: records round-trip through files and restarts, damage of any
// kind is caught and quarantined with what hangs off it, other formats and record lookalikes are
// left alone, directories another user controls keep it closed, the cap holds, the restore guard
// picks a shallower point, and a failing disk pauses writes, not lookups, until it works again.
#include "cache/disk_tier.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "cache/disk_files.h"
#include "cache/disk_files_test_util.h"
#include "cache/disk_inventory.h"

namespace ds::cache {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kBlock = 4;
constexpr const char* kLayout = "test layout: f32 [rows][2]";

std::vector<int32_t> Ids(int64_t n, int32_t start = 0) {
  std::vector<int32_t> ids(n);
  std::iota(ids.begin(), ids.end(), start);
  return ids;
}

class DiskTierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("disk_tier_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, ec);
    fs::remove_all(dir_, ec);
  }

  DiskTierOptions Options(bool hybrid = true) {
    DiskTierOptions o;
    o.dir = dir_.string();
    o.cap_bytes = int64_t{1} << 30;
    o.block_tokens = kBlock;
    o.has_recurrent_state = hybrid;
    o.layout = kLayout;
    o.seed = 7;
    return o;
  }

  std::unique_ptr<DiskTier> Open(const DiskTierOptions& options) {
    StatusOr<std::unique_ptr<DiskTier>> tier = DiskTier::Open(options);
    EXPECT_TRUE(tier.ok()) << tier.status().ToString();
    return tier.ok() ? std::move(tier).value() : nullptr;
  }

  // Payload bytes that name their record, so a restore of the wrong one shows.
  static std::shared_ptr<const std::vector<uint8_t>> Payload(int64_t tag, int64_t size = 64) {
    std::vector<uint8_t> bytes(size);
    for (int64_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(tag * 31 + i);
    return std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  }

  // Blocks [0, tokens.size() / kBlock) and a snapshot at tokens.size().
  static DiskWrite Conversation(const std::vector<int32_t>& tokens, int64_t tag,
                                SnapshotKind kind = SnapshotKind::kGenerationEnd) {
    DiskWrite w;
    w.tokens = tokens;
    for (int64_t j = 0; j < static_cast<int64_t>(tokens.size()) / kBlock; ++j) {
      w.blocks.push_back({j, Payload(tag * 100 + j)});
    }
    w.snapshot = {kind, Payload(tag * 100 + 99)};
    return w;
  }

  // A tier holding one conversation of 10 tokens (blocks 0 and 1, a snapshot at 10), and the
  // match of a request of 12 tokens that extends it.
  std::unique_ptr<DiskTier> OpenWithConversation(DiskMatch* match) {
    auto tier = Open(Options());
    if (tier == nullptr) return nullptr;
    tier->Submit(Conversation(Ids(10), 1));
    tier->Flush();
    *match = tier->Lookup(Ids(12), std::numeric_limits<int64_t>::max());
    return tier;
  }

  // Block 0 with a boundary snapshot at 5, and a conversation of `deep` tokens on the same ids.
  static void SubmitShallowAndDeep(DiskTier* tier, int64_t deep) {
    DiskWrite shallow;
    shallow.tokens = Ids(5);
    shallow.blocks = {{0, Payload(1)}};
    shallow.snapshot = {SnapshotKind::kMessageBoundary, Payload(2)};
    tier->Submit(std::move(shallow));
    tier->Submit(Conversation(Ids(deep), 3));
    tier->Flush();
  }

  std::vector<std::string> Records() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) {
      if (e.path().extension() == ".rec") names.push_back(e.path().filename());
    }
    return names;
  }

  fs::path dir_;
};

TEST(DiskRecordTest, HeaderRoundTripsAndDamageIsCaught) {
  DiskRecordMeta meta;
  meta.is_snapshot = true;
  meta.kind = SnapshotKind::kInterrupted;
  meta.begin_tokens = 8;
  meta.end_tokens = 11;
  meta.key = {1, 2};
  meta.parent_key = {3, 4};
  meta.layout = kLayout;
  meta.ids = {5, 6, 7};
  meta.payload_bytes = 100;
  meta.payload_checksum = {9, 10};
  meta.written_unix_s = 1234;
  std::vector<uint8_t> header = EncodeRecordHeader(meta);
  ASSERT_EQ(static_cast<int64_t>(header.size()), RecordHeaderBytes(meta.layout.size(), 3));
  StatusOr<DiskRecordMeta> back = DecodeRecordHeader(header);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ids, meta.ids);
  EXPECT_EQ(back->layout, meta.layout);
  EXPECT_EQ(back->kind, SnapshotKind::kInterrupted);
  EXPECT_EQ(back->parent_key, meta.parent_key);
  for (size_t i = 0; i < header.size(); ++i) {
    std::vector<uint8_t> damaged = header;
    damaged[i] ^= 0x40;
    StatusOr<DiskRecordMeta> bad = DecodeRecordHeader(damaged);
    EXPECT_FALSE(bad.ok()) << "flipped byte " << i;
  }
  for (size_t n = 0; n < header.size(); ++n) {
    EXPECT_FALSE(DecodeRecordHeader(std::span(header).first(n)).ok()) << "truncated to " << n;
  }
  std::vector<uint8_t> newer = header;
  newer[4] = 2;  // format version
  EXPECT_EQ(DecodeRecordHeader(newer).status().code(), StatusCode::kUnimplemented);
}

TEST_F(DiskTierTest, RecordsSurviveARestartAndAreChecked) {
  const std::vector<int32_t> tokens = Ids(10);
  {
    auto tier = Open(Options());
    ASSERT_NE(tier, nullptr);
    tier->Submit(Conversation(tokens, 1));
    tier->Flush();
    EXPECT_EQ(tier->stats().records_written, 3);  // blocks 0 and 1, snapshot at 10
  }
  EXPECT_EQ(fs::status(dir_).permissions() & fs::perms::all, fs::perms::owner_all);
  for (const std::string& name : Records()) {
    EXPECT_EQ(fs::status(dir_ / name).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write)
        << name;
  }
  auto tier = Open(Options());
  ASSERT_NE(tier, nullptr);
  EXPECT_EQ(tier->stats().records_at_open, 3);
  std::vector<int32_t> longer = Ids(14);
  DiskMatch match = tier->Lookup(longer, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(match.resume_tokens, 10);
  ASSERT_EQ(match.records.size(), 3u);
  EXPECT_EQ(match.kind, SnapshotKind::kGenerationEnd);
  std::vector<uint8_t> payload;
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(tier->Read(match.records[i], longer, &payload).ok());
    EXPECT_EQ(payload, *Payload(100 + i));
  }
  ASSERT_TRUE(tier->Read(match.records[2], longer, &payload).ok());
  EXPECT_EQ(payload, *Payload(199));
  tier->Release(match);

  // The whole stored prompt again resumes before its last token, at the last block boundary.
  EXPECT_EQ(tier->Lookup(tokens, std::numeric_limits<int64_t>::max()).resume_tokens, 0)
      << "a hybrid model has no snapshot before 10";
  // A request that differs inside block 1 shares block 0 but no snapshot.
  std::vector<int32_t> other = Ids(14);
  other[5] = 999;
  EXPECT_EQ(tier->Lookup(other, std::numeric_limits<int64_t>::max()).resume_tokens, 0);
}

// After a restart the server tokenises each conversation's next turn the way it did before,
// from the ids of the conversation ends on disk: re-tokenising the text afresh can give other
// ids (BPE merges across what were separate steps), and then the next turn finds nothing.
TEST_F(DiskTierTest, RecentSequencesGiveTheWholeIdsOfConversationEnds) {
  std::vector<int32_t> other = Ids(7);
  for (int32_t& id : other) id += 500;
  {
    auto tier = Open(Options());
    ASSERT_NE(tier, nullptr);
    tier->Submit(Conversation(Ids(10), 1));
    tier->Submit(Conversation(other, 2, SnapshotKind::kPromptEnd));
    tier->Submit(Conversation(Ids(9), 3, SnapshotKind::kMessageBoundary));
    tier->Flush();
  }
  auto tier = Open(Options());
  ASSERT_NE(tier, nullptr);
  std::vector<std::vector<int32_t>> sequences = tier->RecentSequences(10);
  std::sort(sequences.begin(), sequences.end());
  EXPECT_EQ(sequences, (std::vector<std::vector<int32_t>>{Ids(10), other}));
  EXPECT_EQ(tier->RecentSequences(1).size(), 1u);
}

// A stop writes what is queued, but not for longer than drain_s: a supervisor's SIGKILL after
// its grace period would otherwise cut the drain anywhere.
TEST_F(DiskTierTest, AStopDrainsTheQueueForABoundedTime) {
  DiskTierOptions o = Options();
  double now = 0;
  o.clock_s = [&now] { return now += 1; };  // every look at the clock is a second later
  o.drain_s = 2.5;
  constexpr int kStores = 64;
  // Made first, so that the stores queue up faster than one write takes.
  std::vector<DiskWrite> stores;
  for (int i = 0; i < kStores; ++i) {
    std::vector<int32_t> ids = Ids(10);
    ids[0] = 1000 + i;
    stores.push_back(Conversation(ids, i));
    stores.back().blocks[0].second = Payload(i, 2 << 20);
  }
  {
    auto tier = Open(o);
    ASSERT_NE(tier, nullptr);
    for (DiskWrite& store : stores) tier->Submit(std::move(store));
  }
  const size_t written = Records().size();
  EXPECT_GT(written, 0u);
  EXPECT_LT(written, 3u * kStores);
}

TEST_F(DiskTierTest, DenseModelsResumeInsideAnyCachedBlock) {
  auto tier = Open(Options(/*hybrid=*/false));
  ASSERT_NE(tier, nullptr);
  DiskWrite w;
  w.tokens = Ids(8);
  w.blocks = {{0, Payload(1)}, {1, Payload(2)}};
  tier->Submit(std::move(w));
  tier->Flush();
  DiskMatch match = tier->Lookup(Ids(8), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(match.resume_tokens, 7);  // the last token is computed for its logits
  ASSERT_EQ(match.records.size(), 2u);
  EXPECT_EQ(match.records[1].copy_rows, 3);
  EXPECT_EQ(match.records[1].record_rows, 4);
  tier->Release(match);
}

TEST_F(DiskTierTest, FlippedBytesAreQuarantinedAndNeverRestored) {
  DiskMatch match;
  auto tier = OpenWithConversation(&match);
  ASSERT_NE(tier, nullptr);
  ASSERT_EQ(match.resume_tokens, 10);
  const std::string victim = match.records[2].name;
  {
    std::fstream f(dir_ / victim, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-5, std::ios::end);
    f.put('\x7f');
  }
  std::vector<uint8_t> payload;
  Status read = tier->Read(match.records[2], Ids(12), &payload);
  tier->Release(match);
  EXPECT_EQ(read.code(), StatusCode::kDataLoss);
  EXPECT_TRUE(fs::exists(dir_ / kQuarantineDirName / victim));
  EXPECT_FALSE(fs::exists(dir_ / victim));
  EXPECT_EQ(tier->Lookup(Ids(12), std::numeric_limits<int64_t>::max()).resume_tokens, 0);
  EXPECT_EQ(tier->stats().quarantined, 1);
}

TEST_F(DiskTierTest, ADamagedBlockLeavesTheIndexWithWhatHangsOffIt) {
  auto tier = Open(Options());
  ASSERT_NE(tier, nullptr);
  SubmitShallowAndDeep(tier.get(), 14);  // blocks 1 and 2 and a snapshot at 14 hang off block 0
  DiskMatch match = tier->Lookup(Ids(16), std::numeric_limits<int64_t>::max());
  ASSERT_EQ(match.resume_tokens, 14);
  ASSERT_EQ(match.records.size(), 4u);
  {
    std::fstream f(dir_ / match.records[1].name, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-1, std::ios::end);
    f.put('\x7f');
  }
  std::vector<uint8_t> payload;
  ASSERT_TRUE(tier->Read(match.records[0], Ids(16), &payload).ok());
  EXPECT_EQ(tier->Read(match.records[1], Ids(16), &payload).code(), StatusCode::kDataLoss);
  tier->Release(match);
  const DiskStats stats = tier->stats();
  EXPECT_EQ(stats.num_blocks, 1) << "records behind the damaged block are still indexed";
  EXPECT_EQ(stats.num_snapshots[static_cast<int>(SnapshotKind::kGenerationEnd)], 0);
  EXPECT_EQ(stats.evictions[static_cast<int>(EvictReason::kUselessKv)], 2);
  EXPECT_EQ(Records().size(), 2u) << "block 0 and the snapshot at 5 are left";
  DiskMatch shallower = tier->Lookup(Ids(16), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(shallower.resume_tokens, 5);
  tier->Release(shallower);
}

TEST_F(DiskTierTest, TokenIdsAreComparedNotJustKeys) {
  DiskMatch match;
  auto tier = OpenWithConversation(&match);
  ASSERT_NE(tier, nullptr);
  ASSERT_EQ(match.resume_tokens, 10);
  std::vector<int32_t> other = Ids(12);
  other[9] = -5;  // as if a hash collided: the record's ids differ from this request's
  std::vector<uint8_t> payload;
  EXPECT_EQ(tier->Read(match.records[2], other, &payload).code(), StatusCode::kDataLoss);
  tier->Release(match);
}

TEST_F(DiskTierTest, OpenQuarantinesTruncatedRecordsAndIgnoresOtherFormats) {
  {
    auto tier = Open(Options());
    ASSERT_NE(tier, nullptr);
    tier->Submit(Conversation(Ids(10), 1));
    tier->Submit(Conversation(Ids(6, 50), 2));
    tier->Flush();
  }
  std::vector<std::string> names = Records();
  ASSERT_EQ(names.size(), 5u);
  fs::resize_file(dir_ / names[0], fs::file_size(dir_ / names[0]) - 3);
  {
    std::fstream f(dir_ / names[1], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4);
    f.put('\x09');  // format version 9
  }
  {
    DiskTierOptions o = Options();
    o.layout = "another layout";
    auto tier = Open(o);
    ASSERT_NE(tier, nullptr);
    EXPECT_EQ(tier->stats().records_at_open, 0);
    EXPECT_EQ(tier->stats().ignored, 4);  // another layout: the 3 good ones; another version: 1
    EXPECT_EQ(tier->stats().quarantined, 1);  // damage is damage, whatever the layout
  }
  auto tier = Open(Options());
  ASSERT_NE(tier, nullptr);
  const DiskStats stats = tier->stats();
  EXPECT_EQ(stats.records_at_open, 3);
  EXPECT_EQ(stats.ignored, 1);
  EXPECT_TRUE(fs::exists(dir_ / names[1])) << "another format's record is never deleted";
  EXPECT_TRUE(fs::exists(dir_ / kQuarantineDirName / names[0]));
}

TEST_F(DiskTierTest, RecordLookalikesNeitherHangNorRedirectOpen) {
  fs::create_directories(dir_);
  const fs::path fifo = dir_ / "b-fifo.rec";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const fs::path elsewhere = dir_.string() + "_elsewhere";
  fs::create_directories(elsewhere);
  const std::string name = RecordFileName(false, testing::WriteBlockRecord(elsewhere, 1).key);
  fs::create_symlink(elsewhere / name, dir_ / name);

  std::unique_ptr<DiskTier> tier;
  EXPECT_TRUE(testing::ReturnsInTime([&] { tier = Open(Options()); }, fifo.string()));
  ASSERT_NE(tier, nullptr);
  EXPECT_EQ(tier->stats().records_at_open, 0) << "the link was followed";
  EXPECT_EQ(tier->stats().ignored, 2);
  EXPECT_EQ(tier->stats().quarantined, 0);
  EXPECT_TRUE(fs::is_symlink(dir_ / name)) << "left where it is";
  EXPECT_TRUE(fs::exists(elsewhere / name));
  tier.reset();
  fs::remove_all(elsewhere);
}

TEST_F(DiskTierTest, InterruptedWritesOfDeadProcessesAreRemoved) {
  { auto tier = Open(Options()); }
  std::ofstream(dir_ / kTmpDirName / "b-00.rec.999999999.0") << "torn";
  const std::string mine = "b-01.rec." + std::to_string(::getppid()) + ".0";
  std::ofstream(dir_ / kTmpDirName / mine) << "a live writer's";
  auto tier = Open(Options());
  ASSERT_NE(tier, nullptr);
  EXPECT_EQ(tier->stats().temporary_removed, 1);
  EXPECT_TRUE(fs::exists(dir_ / kTmpDirName / mine));
}

TEST_F(DiskTierTest, EvictionKeepsTheStoreUnderItsCapAndTheNewestTails) {
  DiskTierOptions o = Options();
  const int64_t record_bytes = RecordHeaderBytes(std::strlen(kLayout), kBlock) + 64;
  o.cap_bytes = 40 * record_bytes;
  o.protected_tails = 2;
  auto tier = Open(o);
  ASSERT_NE(tier, nullptr);
  for (int c = 0; c < 30; ++c) {
    tier->Submit(Conversation(Ids(16, 1000 * c), c));  // 4 blocks and a snapshot each
    tier->Flush();
    int64_t on_disk = 0;
    for (const std::string& name : Records()) on_disk += fs::file_size(dir_ / name);
    ASSERT_LE(on_disk, o.cap_bytes) << "after conversation " << c;
    EXPECT_EQ(on_disk, tier->stats().used_bytes);
  }
  EXPECT_GT(tier->stats().num_evictions(), 0);
  for (int c : {28, 29}) {
    std::vector<int32_t> next = Ids(20, 1000 * c);
    DiskMatch m = tier->Lookup(next, std::numeric_limits<int64_t>::max());
    EXPECT_EQ(m.resume_tokens, 16) << "conversation " << c;
    tier->Release(m);
  }
  EXPECT_TRUE(TakeInventory(dir_.string()).orphans.empty());
}

TEST_F(DiskTierTest, TheRestoreGuardFallsBackToAShallowerSnapshot) {
  auto tier = Open(Options());
  ASSERT_NE(tier, nullptr);
  SubmitShallowAndDeep(tier.get(), 13);
  DiskMatch deep = tier->Lookup(Ids(16), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(deep.resume_tokens, 13);
  EXPECT_EQ(deep.restore_bytes, 4 * 64);
  EXPECT_FALSE(deep.guarded);
  tier->Release(deep);
  DiskMatch guarded = tier->Lookup(Ids(16), deep.restore_bytes - 1);
  EXPECT_EQ(guarded.resume_tokens, 5);
  EXPECT_EQ(guarded.restore_bytes, 2 * 64);
  EXPECT_TRUE(guarded.guarded);
  tier->Release(guarded);
  EXPECT_EQ(tier->Lookup(Ids(16), 0).resume_tokens, 0);
}

TEST_F(DiskTierTest, AVanishedDirectoryPausesWritesNotLookups) {
  auto tier = Open(Options());
  ASSERT_NE(tier, nullptr);
  tier->Submit(Conversation(Ids(10), 1));
  tier->Flush();
  fs::remove_all(dir_);
  tier->Submit(Conversation(Ids(10, 500), 2));
  tier->Flush();
  const DiskStats stats = tier->stats();
  EXPECT_FALSE(stats.writable);
  EXPECT_GE(stats.write_errors, 1);
  DiskMatch match = tier->Lookup(Ids(12), std::numeric_limits<int64_t>::max());
  std::vector<uint8_t> payload;
  for (const DiskRecordRef& ref : match.records) {
    EXPECT_FALSE(tier->Read(ref, Ids(12), &payload).ok());
  }
  tier->Release(match);
  EXPECT_FALSE(fs::exists(dir_)) << "quarantining a vanished record made the directory again";
  const int64_t dropped = tier->stats().writes_dropped;
  tier->Submit(Conversation(Ids(10, 900), 3));
  EXPECT_EQ(tier->stats().writes_dropped, dropped + 1) << "dropped at once, never queued";
}

// Makes every write past `bytes` of a file fail with EFBIG, as a full disk fails them with
// ENOSPC (both are ResourceExhausted), until destroyed: process-wide, like the disk.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    handler_ = std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{bytes, saved_.rlim_max};
    EXPECT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, handler_);
  }

 private:
  rlimit saved_;
  void (*handler_)(int);
};

TEST_F(DiskTierTest, AFullDiskPausesWritingWhichResumesOnceAWriteSucceeds) {
  std::atomic<double> now_s{1000};
  DiskTierOptions o = Options();
  o.write_retry_s = 30;
  o.write_retry_max_s = 100;
  o.clock_s = [&now_s] { return now_s.load(); };
  auto tier = Open(o);
  ASSERT_NE(tier, nullptr);
  int tag = 0;
  // Submits a conversation of 3 records, waits for the writer, and says what became of them.
  auto write = [&] {
    const DiskStats before = tier->stats();
    ++tag;
    tier->Submit(Conversation(Ids(10, 100 * tag), tag));
    tier->Flush();
    const DiskStats after = tier->stats();
    return std::tuple{after.records_written - before.records_written,
                      after.writes_dropped - before.writes_dropped,
                      after.write_errors - before.write_errors};
  };
  using Outcome = std::tuple<int64_t, int64_t, int64_t>;  // written, dropped, failed
  ASSERT_EQ(write(), Outcome(3, 0, 0));
  {
    FileSizeLimit full(16);
    EXPECT_EQ(write(), Outcome(0, 2, 1)) << "the rest of the job is dropped, not tried";
    EXPECT_FALSE(tier->stats().writable);
    EXPECT_EQ(write(), Outcome(0, 1, 0)) << "dropped at once, never queued";
  }
  now_s = now_s + 29;  // space is free again, but the pause is not over
  EXPECT_EQ(write(), Outcome(0, 1, 0));
  now_s = now_s + 1;
  EXPECT_EQ(write(), Outcome(3, 0, 0)) << "writing resumes";
  EXPECT_TRUE(tier->stats().writable);

  FileSizeLimit full(16);
  EXPECT_EQ(write(), Outcome(0, 2, 1));  // paused for 30 s
  double pause_s = 30;
  for (double next_pause_s : {60, 100, 100}) {  // each failed retry doubles it, up to 100 s
    now_s = now_s + pause_s - 1;
    EXPECT_EQ(write(), Outcome(0, 1, 0)) << "still paused, " << pause_s << " s";
    now_s = now_s + 1;
    EXPECT_EQ(write(), Outcome(0, 2, 1)) << "a retry after " << pause_s << " s, which fails";
    pause_s = next_pause_s;
  }
}

TEST_F(DiskTierTest, AnUnusableDirectoryIsAClearError) {
  fs::create_directories(dir_.parent_path());
  std::ofstream(dir_) << "a file where the directory should be";
  StatusOr<std::unique_ptr<DiskTier>> tier = DiskTier::Open(Options());
  ASSERT_FALSE(tier.ok());
  EXPECT_NE(tier.status().message().find(dir_.string()), std::string::npos)
      << tier.status().message();
  fs::remove(dir_);
}

TEST_F(DiskTierTest, DirectoriesAnotherUserControlsKeepTheTierClosed) {
  // A model directory others can write may hold their records already.
  fs::create_directories(dir_);
  ASSERT_EQ(::chmod(dir_.c_str(), 0777), 0);
  StatusOr<std::unique_ptr<DiskTier>> tier = DiskTier::Open(Options());
  ASSERT_FALSE(tier.ok());
  EXPECT_NE(tier.status().message().find(dir_.string()), std::string::npos)
      << tier.status().message();
  EXPECT_FALSE(fs::exists(dir_ / kTmpDirName)) << "nothing is made inside it";
  ASSERT_EQ(::chmod(dir_.c_str(), 0700), 0);
  ASSERT_NE(Open(Options()), nullptr);

  if (::chown((dir_ / kQuarantineDirName).c_str(), 65534, 65534) != 0) {
    GTEST_SKIP() << "needs root to give a directory away";
  }
  EXPECT_FALSE(DiskTier::Open(Options()).ok()) << "quarantine/ is another user's";
  fs::remove_all(dir_);

  // The model directory's name is predictable: another user may have made it first.
  DiskTierOptions o = Options();
  o.root_dir = dir_.string();
  o.dir = (dir_ / "0123456789abcdef").string();
  fs::create_directories(o.dir);
  ASSERT_EQ(::chown(o.dir.c_str(), 65534, 65534), 0);
  tier = DiskTier::Open(o);
  ASSERT_FALSE(tier.ok());
  EXPECT_NE(tier.status().message().find("owned by uid 65534"), std::string::npos)
      << tier.status().message();
}

TEST_F(DiskTierTest, TheCacheRootIsTightenedAtOpen) {
  fs::create_directories(dir_);
  ASSERT_EQ(::chmod(dir_.c_str(), 0777), 0);
  DiskTierOptions o = Options();
  o.root_dir = dir_.string();
  o.dir = (dir_ / "0123456789abcdef").string();
  ASSERT_NE(Open(o), nullptr);
  for (const fs::path& d : {dir_, fs::path(o.dir), fs::path(o.dir) / kTmpDirName,
                            fs::path(o.dir) / kQuarantineDirName}) {
    EXPECT_EQ(fs::status(d).permissions(), fs::perms::owner_all) << d;
  }
}

// Start-up time of the index for many records: reported, not asserted (machines are noisy).
TEST_F(DiskTierTest, TenThousandRecordsAreIndexedAtOpen) {
  { auto tier = Open(Options()); }
  constexpr int kConversations = 2000;  // 4 blocks and a snapshot each: 10,000 records
  std::vector<uint8_t> payload(256, 1);
  for (int c = 0; c < kConversations; ++c) {
    std::vector<int32_t> ids = Ids(16, 100 * c);
    Hash128 parent{};
    auto write = [&](DiskRecordMeta meta) {
      meta.layout = kLayout;
      meta.payload_bytes = static_cast<int64_t>(payload.size());
      meta.payload_checksum = PayloadChecksum(payload);
      std::vector<uint8_t> header = EncodeRecordHeader(meta);
      std::ofstream out(dir_ / RecordFileName(meta.is_snapshot, meta.key), std::ios::binary);
      out.write(reinterpret_cast<const char*>(header.data()), header.size());
      out.write(reinterpret_cast<const char*>(payload.data()), payload.size());
    };
    for (int j = 0; j < 4; ++j) {
      DiskRecordMeta meta;
      meta.begin_tokens = j * kBlock;
      meta.end_tokens = meta.begin_tokens + kBlock;
      meta.ids.assign(ids.begin() + meta.begin_tokens, ids.begin() + meta.end_tokens);
      meta.parent_key = parent;
      meta.key = BlockKey(parent, meta.ids, 7);
      parent = meta.key;
      write(meta);
    }
    DiskRecordMeta snap;
    snap.is_snapshot = true;
    snap.kind = SnapshotKind::kGenerationEnd;
    snap.begin_tokens = snap.end_tokens = 16;
    snap.parent_key = parent;
    snap.key = SnapshotKey(parent, {}, 7);
    write(snap);
  }
  auto start = std::chrono::steady_clock::now();
  auto tier = Open(Options());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_NE(tier, nullptr);
  EXPECT_EQ(tier->stats().records_at_open, 5 * kConversations);
  std::printf("indexed %lld records at open in %.3f s\n",
              static_cast<long long>(tier->stats().records_at_open), seconds);
  DiskMatch m = tier->Lookup(Ids(20, 100 * 1234), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(m.resume_tokens, 16);
  tier->Release(m);
}

}  // namespace
}  // namespace ds::cache
