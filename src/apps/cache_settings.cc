#include "apps/cache_settings.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

namespace ds::apps {
namespace {

using Json = nlohmann::json;

Status Unknown(const std::string& key) {
  return InvalidArgumentError("cache config: unknown key \"" + key + "\"");
}

Status ReadBool(const Json& object, const std::string& key, const std::string& path, bool* out) {
  if (!object.contains(key)) return OkStatus();
  if (!object[key].is_boolean()) {
    return InvalidArgumentError("cache config: " + path + key + " must be true or false");
  }
  *out = object[key].get<bool>();
  return OkStatus();
}

template <typename T>
Status ReadNumber(const Json& object, const std::string& key, const std::string& path, double min,
                  T* out) {
  if (!object.contains(key)) return OkStatus();
  const Json& v = object[key];
  if (!v.is_number() || v.get<double>() < min ||
      (std::is_integral_v<T> && !v.is_number_integer())) {
    return InvalidArgumentError("cache config: " + path + key + " must be " +
                                (std::is_integral_v<T> ? "an integer" : "a number") +
                                " >= " + std::to_string(static_cast<int64_t>(min)));
  }
  *out = v.get<T>();
  return OkStatus();
}

Status CheckKeys(const Json& object, const std::string& path,
                 std::initializer_list<const char*> known) {
  if (!object.is_object()) return InvalidArgumentError("cache config: " + path + " must be an object");
  for (const auto& [key, value] : object.items()) {
    bool found = false;
    for (const char* k : known) found |= key == k;
    if (!found) return Unknown(path + key);
  }
  return OkStatus();
}

}  // namespace

std::string DefaultCacheDir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') {
    return std::string(xdg) + "/deltaserve";
  }
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr && home[0] != '\0' ? home : "/tmp") + "/.cache/deltaserve";
}

Status ApplyCacheConfigFile(const std::string& path, CacheSettings* s) {
  std::ifstream in(path);
  if (!in) return NotFoundError("cannot read cache config " + path);
  Json doc = Json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return InvalidArgumentError("cache config " + path + " is not JSON");
  DS_RETURN_IF_ERROR(CheckKeys(doc, "", {"memory", "disk", "block_tokens", "snapshot_interval",
                                         "eviction", "restore_guard"}));
  if (doc.contains("memory")) {
    const Json& m = doc["memory"];
    DS_RETURN_IF_ERROR(CheckKeys(m, "memory.", {"enabled", "size_mib"}));
    DS_RETURN_IF_ERROR(ReadBool(m, "enabled", "memory.", &s->memory_enabled));
    DS_RETURN_IF_ERROR(ReadNumber(m, "size_mib", "memory.", 1, &s->memory_mib));
  }
  if (doc.contains("disk")) {
    const Json& d = doc["disk"];
    DS_RETURN_IF_ERROR(CheckKeys(d, "disk.", {"enabled", "dir", "cap_gb", "verify_checksums"}));
    DS_RETURN_IF_ERROR(ReadBool(d, "enabled", "disk.", &s->disk_enabled));
    if (d.contains("dir")) {
      if (!d["dir"].is_string() || d["dir"].get<std::string>().empty()) {
        return InvalidArgumentError("cache config: disk.dir must be a non-empty string");
      }
      s->disk_dir = d["dir"];
    }
    DS_RETURN_IF_ERROR(ReadNumber(d, "cap_gb", "disk.", 0, &s->disk_cap_gb));
    DS_RETURN_IF_ERROR(ReadBool(d, "verify_checksums", "disk.", &s->verify_checksums));
  }
  DS_RETURN_IF_ERROR(ReadNumber(doc, "block_tokens", "", 1, &s->block_tokens));
  DS_RETURN_IF_ERROR(ReadNumber(doc, "snapshot_interval", "", 0, &s->snapshot_interval));
  if (doc.contains("eviction")) {
    const Json& e = doc["eviction"];
    if (e == "value") {
      s->eviction = cache::EvictionPolicy::kValue;
    } else if (e == "recency") {
      s->eviction = cache::EvictionPolicy::kRecency;
    } else {
      return InvalidArgumentError("cache config: eviction must be \"value\" or \"recency\"");
    }
  }
  if (doc.contains("restore_guard")) {
    const Json& g = doc["restore_guard"];
    DS_RETURN_IF_ERROR(CheckKeys(g, "restore_guard.", {"enabled", "reserve_mib"}));
    DS_RETURN_IF_ERROR(ReadBool(g, "enabled", "restore_guard.", &s->restore_guard));
    DS_RETURN_IF_ERROR(ReadNumber(g, "reserve_mib", "restore_guard.", 0, &s->restore_reserve_mib));
  }
  return OkStatus();
}

Status ValidateCacheSettings(const CacheSettings& s) {
  // 2^40 MiB is far past any machine and keeps byte counts inside int64.
  constexpr int64_t kMaxMib = int64_t{1} << 40;
  if (s.memory_mib < 0 || s.memory_mib > kMaxMib || s.restore_reserve_mib < 0 ||
      s.restore_reserve_mib > kMaxMib) {
    return InvalidArgumentError("--cache-ram and the restore reserve must be in [0, 2^40] MiB");
  }
  if (s.block_tokens <= 0 || s.snapshot_interval < 0) {
    return InvalidArgumentError("--cache-block must be > 0 and --snapshot-interval >= 0");
  }
  if (!(s.disk_cap_gb >= 0) || s.disk_cap_gb > 1e9) {
    return InvalidArgumentError("--cache-disk-gb must be in [0, 1e9]");
  }
  return OkStatus();
}

std::string ModelCacheDir(const std::string& dir, uint64_t fingerprint) {
  char hex[24];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(fingerprint));
  return dir + "/" + hex;
}

engine::StateCacheOptions EngineCacheOptions(const CacheSettings& s, uint64_t fingerprint) {
  engine::StateCacheOptions options;
  const bool memory = s.memory_enabled && s.memory_mib > 0;
  options.budget_bytes = memory ? s.memory_mib << 20 : 0;
  options.block_tokens = s.block_tokens;
  options.snapshot_interval_tokens = s.snapshot_interval;
  options.model_fingerprint = fingerprint;
  options.restore_guard = s.restore_guard;
  options.restore_reserve_bytes = s.restore_reserve_mib << 20;
  options.eviction = s.eviction;
  if (memory && s.disk_enabled && s.disk_cap_gb > 0) {
    engine::StateCacheOptions::Disk disk;
    disk.root_dir = s.disk_dir.empty() ? DefaultCacheDir() : s.disk_dir;
    disk.dir = ModelCacheDir(disk.root_dir, fingerprint);
    disk.cap_bytes = static_cast<int64_t>(s.disk_cap_gb * (1 << 30));
    disk.verify_checksums = s.verify_checksums;
    options.disk = disk;
  }
  return options;
}

}  // namespace ds::apps
