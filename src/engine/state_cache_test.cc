// StateCache over both tiers without a model: a hand-made hybrid layout whose KV rows and
// recurrent slots hold values that name their position, so a restore shows what it brought back.
#include "engine/state_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "cache/disk_files.h"
#include "cache/disk_record.h"

namespace ds::engine {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kBlock = 4;

state::StateLayout HybridLayout() {
  state::StateLayout layout;
  layout.layer_kinds = {state::LayerKind::kAttention, state::LayerKind::kRecurrent};
  layout.kv_row_floats = 8;
  layout.conv_floats = 4;
  layout.ssm_floats = 4;
  layout.max_tokens = 64;
  return layout;
}

// Appends KV rows up to `end` tokens, each float its row's position, and sets the recurrent slots
// to `end`, as if the model had run to there.
void RunTo(state::SequenceState* s, int64_t end) {
  const int64_t begin = s->num_tokens();
  std::vector<uint8_t> bytes(s->KvRowsBytes(end - begin));
  std::vector<float> floats(bytes.size() / sizeof(float));
  const int64_t row_floats = s->layout().kv_row_floats;
  for (size_t i = 0; i < floats.size(); ++i) {
    floats[i] = static_cast<float>(begin + (i / row_floats) % (end - begin));
  }
  std::memcpy(bytes.data(), floats.data(), bytes.size());
  ASSERT_TRUE(s->AppendKvRows(bytes, end - begin, end - begin).ok());
  std::fill_n(s->conv_state(1), s->layout().conv_floats, static_cast<float>(end));
  std::fill_n(s->ssm_state(1), s->layout().ssm_floats, static_cast<float>(end));
}

// True when `s` holds exactly what RunTo(position) from an empty state would.
bool HoldsPosition(const state::SequenceState& s, int64_t position) {
  state::SequenceState expected(s.layout());
  RunTo(&expected, position);
  return s.num_tokens() == position && s.Snapshot() == expected.Snapshot();
}

class StateCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) /
            ("state_cache_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  StateCacheOptions Options() const {
    StateCacheOptions o;
    o.budget_bytes = int64_t{16} << 20;
    o.block_tokens = kBlock;
    o.snapshot_interval_tokens = 0;
    o.model_fingerprint = 0x5eed;
    o.restore_guard = false;
    o.disk = StateCacheOptions::Disk{model_dir(), int64_t{1} << 30, true, root_.string()};
    return o;
  }
  std::string model_dir() const { return (root_ / "0000000000005eed").string(); }

  fs::path root_;
};

TEST_F(StateCacheTest, ADiskDirectoryAnotherUserMadeLeavesTheMemoryTierServing) {
  fs::create_directories(model_dir());
  if (::chown(model_dir().c_str(), 65534, 65534) != 0) {
    GTEST_SKIP() << "needs root to give a directory away";
  }
  StateCache cache(Options(), HybridLayout());
  EXPECT_EQ(cache.disk(), nullptr) << "another user's directory was trusted";
  std::vector<int32_t> tokens(12);
  std::iota(tokens.begin(), tokens.end(), 100);
  state::SequenceState s(HybridLayout());
  RunTo(&s, 8);
  cache.Store(tokens, s, cache::SnapshotKind::kPromptEnd);
  state::SequenceState restored(HybridLayout());
  CacheLookup lookup = cache.Restore(tokens, &restored);
  EXPECT_EQ(lookup.resumed_tokens, 8);
  EXPECT_EQ(lookup.tier, CacheTier::kMemory);
  EXPECT_TRUE(HoldsPosition(restored, 8));
}

// One damaged block in the middle of a chain on disk: the restore keeps the good prefix before
// it (here up to the snapshot at 4), and the damaged block leaves the index with what hangs off it.
TEST_F(StateCacheTest, ADamagedDiskBlockCostsOnlyTheDepthPastIt) {
  std::vector<int32_t> tokens(16);
  std::iota(tokens.begin(), tokens.end(), 100);
  {
    StateCache writer(Options(), HybridLayout());
    ASSERT_NE(writer.disk(), nullptr);
    state::SequenceState s(HybridLayout());
    RunTo(&s, 4);
    writer.Store(tokens, s, cache::SnapshotKind::kMessageBoundary);
    RunTo(&s, 12);
    writer.Store(tokens, s, cache::SnapshotKind::kGenerationEnd);
  }  // written: blocks 0, 1 and 2 and snapshots at 4 and 12
  const std::span<const int32_t> ids(tokens);
  const uint64_t seed = Options().model_fingerprint;
  const cache::Hash128 block0 = cache::BlockKey({}, ids.subspan(0, kBlock), seed);
  const cache::Hash128 block1 = cache::BlockKey(block0, ids.subspan(kBlock, kBlock), seed);
  const fs::path damaged = fs::path(model_dir()) / cache::RecordFileName(false, block1);
  {
    std::fstream f(damaged, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-1, std::ios::end);
    f.put('\x55');
  }

  StateCache reader(Options(), HybridLayout());  // a restart: memory is empty
  ASSERT_NE(reader.disk(), nullptr);
  ASSERT_EQ(reader.disk()->stats().records_at_open, 5);
  state::SequenceState restored(HybridLayout());
  CacheLookup lookup = reader.Restore(tokens, &restored);
  EXPECT_EQ(lookup.resumed_tokens, 4) << "the good prefix before the damaged block was lost";
  EXPECT_EQ(lookup.tier, CacheTier::kDisk);
  EXPECT_TRUE(HoldsPosition(restored, 4));

  const cache::DiskStats disk = reader.disk()->stats();
  EXPECT_EQ(disk.quarantined, 1);
  EXPECT_EQ(disk.num_blocks, 1) << "block 1 and block 2 behind it are still indexed";
  EXPECT_EQ(disk.num_snapshots[static_cast<int>(cache::SnapshotKind::kMessageBoundary)], 1);
  EXPECT_EQ(disk.num_snapshots[static_cast<int>(cache::SnapshotKind::kGenerationEnd)], 0);
  EXPECT_TRUE(fs::exists(fs::path(model_dir()) / cache::kQuarantineDirName / damaged.filename()));
  EXPECT_FALSE(fs::exists(damaged));
  // A second request finds no records that can only fail: the memory tier has the prefix now.
  state::SequenceState again(HybridLayout());
  EXPECT_EQ(reader.Restore(tokens, &again).tier, CacheTier::kMemory);
  EXPECT_EQ(reader.disk()->stats().quarantined, 1);
}

}  // namespace
}  // namespace ds::engine
