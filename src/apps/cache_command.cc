// `deltaserve cache ls|stat|verify|gc|clear`: look into and maintain the disk tier's directory
// without a model or a server. Each model fingerprint has its own subdirectory.
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>

#include "apps/cache_settings.h"
#include "apps/commands.h"
#include "cache/disk_files.h"
#include "cache/disk_inventory.h"

namespace ds::apps {
namespace {

namespace fs = std::filesystem;

struct CacheFlags {
  std::string dir;
  std::string model;       // one fingerprint directory; empty: all
  double cap_gb = -1;      // gc: evict down to this many GB; < 0: no eviction
  bool dry_run = false;    // verify: report only
};

std::string Size(int64_t bytes) {
  char buf[32];
  if (bytes >= (int64_t{1} << 30)) {
    std::snprintf(buf, sizeof(buf), "%.2f GiB", bytes / 1073741824.0);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f MiB", bytes / 1048576.0);
  }
  return buf;
}

std::string Age(int64_t unix_s) {
  const int64_t s = std::max<int64_t>(0, static_cast<int64_t>(std::time(nullptr)) - unix_s);
  char buf[32];
  if (s < 120) {
    std::snprintf(buf, sizeof(buf), "%llds ago", static_cast<long long>(s));
  } else if (s < 7200) {
    std::snprintf(buf, sizeof(buf), "%lldm ago", static_cast<long long>(s / 60));
  } else if (s < 172800) {
    std::snprintf(buf, sizeof(buf), "%lldh ago", static_cast<long long>(s / 3600));
  } else {
    std::snprintf(buf, sizeof(buf), "%lldd ago", static_cast<long long>(s / 86400));
  }
  return buf;
}

// The model directories under dir: 16 hex digits each.
std::vector<std::string> ModelDirs(const CacheFlags& flags) {
  std::vector<std::string> dirs;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(flags.dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory(ec) || name.size() != 16 ||
        name.find_first_not_of("0123456789abcdef") != std::string::npos) {
      continue;
    }
    if (flags.model.empty() || flags.model == name) dirs.push_back(entry.path().string());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

int Ls(const CacheFlags& flags) {
  for (const std::string& dir : ModelDirs(flags)) {
    cache::DiskInventory inv = cache::TakeInventory(dir);
    std::printf("model %s: %zu records, %s, %zu conversations\n",
                fs::path(dir).filename().c_str(), inv.records.size(),
                Size(inv.record_bytes).c_str(), inv.conversations.size());
    for (const cache::DiskConversation& c : inv.conversations) {
      std::printf("  conversation of %lld tokens: %zu snapshots, %lld blocks, %s, written %s\n",
                  static_cast<long long>(c.tokens), c.snapshots.size(),
                  static_cast<long long>(c.blocks), Size(c.bytes).c_str(),
                  Age(c.newest_unix_s).c_str());
      for (size_t i : c.snapshots) {
        const cache::ScannedRecord& r = inv.records[i];
        std::printf("    %-16s at %8lld  %10s  %s  %s\n", cache::SnapshotKindName(r.meta.kind),
                    static_cast<long long>(r.meta.end_tokens), Size(r.file_bytes).c_str(),
                    Age(r.meta.written_unix_s).c_str(), r.name.c_str());
      }
    }
  }
  return 0;
}

int Stat(const CacheFlags& flags) {
  std::printf("cache directory %s\n", flags.dir.c_str());
  for (const std::string& dir : ModelDirs(flags)) {
    cache::DiskInventory inv = cache::TakeInventory(dir);
    int64_t blocks = 0, snapshots = 0, oldest = 0, newest = 0;
    std::array<int64_t, cache::kNumSnapshotKinds> by_kind{};
    for (const cache::ScannedRecord& r : inv.records) {
      if (r.meta.is_snapshot) {
        ++snapshots;
        ++by_kind[static_cast<int>(r.meta.kind)];
      } else {
        ++blocks;
      }
      oldest = oldest == 0 ? r.meta.written_unix_s : std::min(oldest, r.meta.written_unix_s);
      newest = std::max(newest, r.meta.written_unix_s);
    }
    std::printf("model %s\n", fs::path(dir).filename().c_str());
    std::printf("  records        %zu (%lld KV blocks, %lld snapshots), %s\n", inv.records.size(),
                static_cast<long long>(blocks), static_cast<long long>(snapshots),
                Size(inv.record_bytes).c_str());
    for (int k = 0; k < cache::kNumSnapshotKinds; ++k) {
      if (by_kind[k] > 0) {
        std::printf("    %-16s %lld\n", cache::SnapshotKindName(static_cast<cache::SnapshotKind>(k)),
                    static_cast<long long>(by_kind[k]));
      }
    }
    std::printf("  conversations  %zu\n", inv.conversations.size());
    if (newest > 0) {
      std::printf("  written        %s to %s\n", Age(oldest).c_str(), Age(newest).c_str());
    }
    std::printf("  unreachable    %zu (their parent block is gone)\n", inv.orphans.size());
    std::printf("  damaged        %zu header(s); run verify to check payloads\n",
                inv.damaged.size());
    std::printf("  other format   %zu (kept, never read)\n", inv.other_format.size());
    std::printf("  foreign        %zu *.rec entries that are no records or cannot be read\n",
                inv.foreign.size());
    std::printf("  quarantined    %lld file(s), %s\n",
                static_cast<long long>(inv.quarantined_files), Size(inv.quarantined_bytes).c_str());
    std::printf("  temporary      %lld file(s) of interrupted writes\n",
                static_cast<long long>(inv.temporary_files));
  }
  return 0;
}

// `cache verify` exits with one bit per kind of finding, as fsck does, so that a script can tell
// damage (which verify repairs by quarantine) from files it leaves alone.
constexpr int kVerifyDamaged = 1;
constexpr int kVerifyOtherFormat = 2;  // another format version: kept, as another build reads it
constexpr int kVerifyForeign = 4;      // *.rec entries that are no records or cannot be read

int Verify(const CacheFlags& flags) {
  int64_t checked = 0, num_damaged = 0, num_other_format = 0, num_foreign = 0;
  for (const std::string& dir : ModelDirs(flags)) {
    const std::string model = fs::path(dir).filename().string();
    cache::DiskInventory inv = cache::TakeInventory(dir);
    checked += static_cast<int64_t>(inv.records.size() + inv.damaged.size() +
                                    inv.other_format.size() + inv.foreign.size());
    std::vector<uint8_t> payload;
    for (cache::ScannedRecord& r : inv.records) {
      cache::DiskRecordMeta meta;
      r.status = cache::ReadRecord(dir + "/" + r.name, /*verify_payload=*/true, &meta, &payload);
      if (r.status.ok() && r.name != cache::RecordFileName(meta.is_snapshot, meta.key)) {
        r.status = DataLossError("its name does not match its key");
      }
      if (r.status.code() == StatusCode::kUnavailable) {
        inv.foreign.push_back(std::move(r));  // replaced since the scan, or unreadable
      } else if (!r.status.ok()) {
        inv.damaged.push_back(std::move(r));
      }
    }
    auto report = [&](const char* label, const std::vector<cache::ScannedRecord>& list) {
      for (const cache::ScannedRecord& r : list) {
        std::printf("%s %s/%s: %s\n", label, model.c_str(), r.name.c_str(),
                    r.status.message().c_str());
      }
      return static_cast<int64_t>(list.size());
    };
    num_damaged += report("DAMAGED", inv.damaged);
    num_other_format += report("OTHER FORMAT", inv.other_format);
    num_foreign += report("FOREIGN", inv.foreign);
    if (!flags.dry_run) {
      for (const cache::ScannedRecord& r : inv.damaged) cache::Quarantine(dir, r.name);
    }
  }
  std::printf("verified %lld records: %lld damaged%s, %lld of another format version (kept), "
              "%lld foreign or unreadable (left in place)\n",
              static_cast<long long>(checked), static_cast<long long>(num_damaged),
              num_damaged == 0 ? ""
              : flags.dry_run  ? " (left in place)"
                               : " (moved to quarantine)",
              static_cast<long long>(num_other_format), static_cast<long long>(num_foreign));
  return (num_damaged > 0 ? kVerifyDamaged : 0) | (num_other_format > 0 ? kVerifyOtherFormat : 0) |
         (num_foreign > 0 ? kVerifyForeign : 0);
}

int64_t RemoveDirectoryFiles(const std::string& dir) {
  int64_t removed = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec) && fs::remove(entry.path(), ec)) ++removed;
  }
  return removed;
}

int Gc(const CacheFlags& flags) {
  for (const std::string& dir : ModelDirs(flags)) {
    const int64_t tmp = cache::RemoveTemporaryFiles(dir);
    const int64_t quarantined = RemoveDirectoryFiles(dir + "/" + cache::kQuarantineDirName);
    cache::DiskInventory inv = cache::TakeInventory(dir);
    std::error_code ec;
    for (const std::string& name : inv.orphans) fs::remove(dir + "/" + name, ec);
    int64_t evicted = 0;
    if (flags.cap_gb >= 0) {
      // Oldest first, whole conversations' tails last: a record shared by a newer conversation
      // is written no later than that conversation's newest record.
      std::vector<const cache::ScannedRecord*> order;
      for (const cache::ScannedRecord& r : inv.records) order.push_back(&r);
      std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
        return a->meta.written_unix_s < b->meta.written_unix_s;
      });
      const int64_t cap = static_cast<int64_t>(flags.cap_gb * (1 << 30));
      int64_t used = inv.record_bytes;
      for (const cache::ScannedRecord* r : order) {
        if (used <= cap) break;
        if (fs::remove(dir + "/" + r->name, ec)) {
          used -= r->file_bytes;
          ++evicted;
        }
      }
      // Records whose parent just went can never be reached; they go too.
      for (const std::string& name : cache::TakeInventory(dir).orphans) {
        if (fs::remove(dir + "/" + name, ec)) ++evicted;
      }
    }
    std::printf("model %s: removed %lld temporary, %lld quarantined, %zu unreachable, %lld "
                "evicted records\n",
                fs::path(dir).filename().c_str(), static_cast<long long>(tmp),
                static_cast<long long>(quarantined), inv.orphans.size(),
                static_cast<long long>(evicted));
  }
  return 0;
}

int Clear(const CacheFlags& flags) {
  int64_t removed = 0;
  for (const std::string& dir : ModelDirs(flags)) {
    for (const char* sub : {cache::kTmpDirName, cache::kQuarantineDirName}) {
      removed += RemoveDirectoryFiles(dir + "/" + sub);
    }
    for (const cache::ScannedRecord& r : cache::ScanRecords(dir)) {
      std::error_code ec;
      if (fs::remove(dir + "/" + r.name, ec)) ++removed;
    }
  }
  std::printf("removed %lld files from %s\n", static_cast<long long>(removed), flags.dir.c_str());
  return 0;
}

}  // namespace

CommandFn RegisterCache(CLI::App* app) {
  app->require_subcommand(1);
  auto flags = std::make_shared<CacheFlags>();
  auto run = std::make_shared<std::function<int()>>();
  struct Mode {
    const char* name;
    const char* help;
    int (*fn)(const CacheFlags&);
  };
  for (const Mode& mode : {Mode{"ls", "conversations and their snapshots, sizes and ages", Ls},
                           Mode{"stat", "totals per model: records, bytes, damage", Stat},
                           Mode{"verify",
                                "check every record's checksums; quarantine damage. Exit status "
                                "or-s 1 (damaged), 2 (another format), 4 (foreign files)",
                                Verify},
                           Mode{"gc", "remove temporary, quarantined and unreachable files", Gc},
                           Mode{"clear", "remove every record", Clear}}) {
    CLI::App* sub = app->add_subcommand(mode.name, mode.help);
    sub->add_option("--cache-dir", flags->dir, "the disk tier's directory (default: the server's)")
        ->envname("DELTASERVE_CACHE_DIR");
    sub->add_option("--model", flags->model, "only this model fingerprint's directory");
    if (std::string(mode.name) == "gc") {
      sub->add_option("--cache-disk-gb", flags->cap_gb, "also evict the oldest records down to this");
    }
    if (std::string(mode.name) == "verify") {
      sub->add_flag("--dry-run", flags->dry_run, "report damage, move nothing");
    }
    sub->callback([flags, run, fn = mode.fn] { *run = [flags, fn] { return fn(*flags); }; });
  }
  return [flags, run] {
    if (flags->dir.empty()) flags->dir = DefaultCacheDir();
    if (!fs::is_directory(flags->dir)) {
      std::fprintf(stderr, "deltaserve cache: %s is not a directory\n", flags->dir.c_str());
      return 1;
    }
    return (*run)();
  };
}

}  // namespace ds::apps
