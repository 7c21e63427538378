// Every prefix-cache setting of `deltaserve serve`, from defaults, then the JSON file of
// --cache-config, then the flags given explicitly (docs/configuration.md lists the keys).
// Thread safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "cache/types.h"
#include "engine/state_cache.h"

namespace ds::apps {

struct CacheSettings {
  bool memory_enabled = true;
  int64_t memory_mib = 8192;
  bool disk_enabled = true;
  std::string disk_dir;  // empty: DefaultCacheDir()
  double disk_cap_gb = 32;
  bool verify_checksums = true;
  int64_t block_tokens = 256;
  int64_t snapshot_interval = 512;
  cache::EvictionPolicy eviction = cache::EvictionPolicy::kValue;
  bool restore_guard = true;
  int64_t restore_reserve_mib = 1024;
};

// $XDG_CACHE_HOME/deltaserve, else $HOME/.cache/deltaserve.
std::string DefaultCacheDir();

// Reads `path` (a JSON object) into `settings`; an unknown key or a value of the wrong type or
// range is an error that names it.
Status ApplyCacheConfigFile(const std::string& path, CacheSettings* settings);

Status ValidateCacheSettings(const CacheSettings& settings);

// The engine's options; the disk directory is <dir>/<fingerprint as 16 hex digits>, inside the
// root <dir>.
engine::StateCacheOptions EngineCacheOptions(const CacheSettings& settings, uint64_t fingerprint);

// "<dir>/<fingerprint>".
std::string ModelCacheDir(const std::string& dir, uint64_t fingerprint);

}  // namespace ds::apps
