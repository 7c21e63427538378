// The cache config file and the model fingerprint that keys the disk tier.
#include "apps/cache_settings.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "apps/model_fingerprint.h"
#include "apps/test_models.h"

namespace ds::apps {
namespace {

std::string WriteConfig(const std::string& text) {
  const std::string path = ::testing::TempDir() + "cache_config_" + std::to_string(::getpid()) +
                           "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name() +
                           ".json";
  std::ofstream(path) << text;
  return path;
}

TEST(CacheSettingsTest, EveryDocumentedKeyIsRead) {
  CacheSettings s;
  Status status = ApplyCacheConfigFile(WriteConfig(R"({
      "memory": {"enabled": true, "size_mib": 2048},
      "disk": {"enabled": true, "dir": "/srv/cache", "cap_gb": 1.5, "verify_checksums": false},
      "block_tokens": 128, "snapshot_interval": 2048, "eviction": "recency",
      "restore_guard": {"enabled": false, "reserve_mib": 64}})"), &s);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(s.memory_mib, 2048);
  EXPECT_EQ(s.disk_dir, "/srv/cache");
  EXPECT_DOUBLE_EQ(s.disk_cap_gb, 1.5);
  EXPECT_FALSE(s.verify_checksums);
  EXPECT_EQ(s.block_tokens, 128);
  EXPECT_EQ(s.snapshot_interval, 2048);
  EXPECT_EQ(s.eviction, cache::EvictionPolicy::kRecency);
  EXPECT_FALSE(s.restore_guard);
  EXPECT_EQ(s.restore_reserve_mib, 64);
  ASSERT_TRUE(ValidateCacheSettings(s).ok());

  engine::StateCacheOptions options = EngineCacheOptions(s, 0xabcdef);
  EXPECT_EQ(options.budget_bytes, int64_t{2048} << 20);
  ASSERT_TRUE(options.disk.has_value());
  EXPECT_EQ(options.disk->dir, "/srv/cache/0000000000abcdef");
  EXPECT_EQ(options.disk->root_dir, "/srv/cache") << "checked and tightened at start too";
  EXPECT_EQ(options.disk->cap_bytes, int64_t{3} << 29);
  EXPECT_FALSE(options.disk->verify_checksums);
  EXPECT_EQ(options.model_fingerprint, 0xabcdefu);
  EXPECT_EQ(options.eviction, cache::EvictionPolicy::kRecency);
  EXPECT_FALSE(options.restore_guard);
}

TEST(CacheSettingsTest, TiersTurnOff) {
  CacheSettings s;
  ASSERT_TRUE(ApplyCacheConfigFile(WriteConfig(R"({"disk": {"enabled": false}})"), &s).ok());
  EXPECT_FALSE(EngineCacheOptions(s, 1).disk.has_value());
  EXPECT_GT(EngineCacheOptions(s, 1).budget_bytes, 0);
  CacheSettings no_memory;
  ASSERT_TRUE(
      ApplyCacheConfigFile(WriteConfig(R"({"memory": {"enabled": false}})"), &no_memory).ok());
  EXPECT_EQ(EngineCacheOptions(no_memory, 1).budget_bytes, 0);
  EXPECT_FALSE(EngineCacheOptions(no_memory, 1).disk.has_value()) << "the disk tier needs memory";
}

TEST(CacheSettingsTest, MistakesAreNamed) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"memroy": {}})", "memroy"},
      {R"({"disk": {"cap": 3}})", "disk.cap"},
      {R"({"disk": {"cap_gb": "big"}})", "disk.cap_gb"},
      {R"({"memory": {"size_mib": 1.5}})", "memory.size_mib"},
      {R"({"eviction": "lfu"})", "eviction"},
      {R"({"restore_guard": {"enabled": 1}})", "restore_guard.enabled"},
      {R"({"disk": {"dir": ""}})", "disk.dir"},
      {R"([1, 2])", "must be an object"},
      {"{not json", "not JSON"},
  };
  for (const auto& [text, named] : cases) {
    CacheSettings s;
    Status status = ApplyCacheConfigFile(WriteConfig(text), &s);
    ASSERT_FALSE(status.ok()) << text;
    EXPECT_NE(status.message().find(named), std::string::npos) << status.message();
  }
  CacheSettings s;
  EXPECT_EQ(ApplyCacheConfigFile("/nonexistent/cache.json", &s).code(), StatusCode::kNotFound);
}

TEST(CacheSettingsTest, DefaultDirectoryFollowsXdg) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const std::string saved = xdg ? xdg : "";
  const std::string home = std::getenv("HOME") ? std::getenv("HOME") : "";
  ::setenv("XDG_CACHE_HOME", "/x/cache", 1);
  EXPECT_EQ(DefaultCacheDir(), "/x/cache/deltaserve");
  ::setenv("XDG_CACHE_HOME", "relative/is/ignored", 1);  // the XDG spec wants absolute paths
  ::setenv("HOME", "/home/u", 1);
  EXPECT_EQ(DefaultCacheDir(), "/home/u/.cache/deltaserve");
  ::setenv("HOME", home.c_str(), 1);
  if (xdg) {
    ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  } else {
    ::unsetenv("XDG_CACHE_HOME");
  }
}

TEST(ModelFingerprintTest, SameModelSameKeyAnyChangeAnother) {
  ModelConfig config = TinyConfig("qwen35moe");
  std::unique_ptr<TestModel> a = BuildTestModel(config);
  std::unique_ptr<TestModel> again = BuildTestModel(config);
  EXPECT_EQ(ModelFingerprint(*a->file), ModelFingerprint(*again->file));
  ModelConfig reseeded = config;
  reseeded.seed += 1;  // other weights, same shapes and metadata
  EXPECT_NE(ModelFingerprint(*a->file), ModelFingerprint(*BuildTestModel(reseeded)->file));
  ModelConfig other_arch = TinyConfig("qwen3");
  EXPECT_NE(ModelFingerprint(*a->file), ModelFingerprint(*BuildTestModel(other_arch)->file));
}

}  // namespace
}  // namespace ds::apps
