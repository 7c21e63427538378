#include "cache/disk_inventory.h"

#include <algorithm>
#include <filesystem>
#include <unordered_map>
#include <unordered_set>

namespace ds::cache {
namespace {

void CountFiles(const std::string& dir, int64_t* files, int64_t* bytes) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file(ec)) continue;
    ++*files;
    if (bytes != nullptr) *bytes += static_cast<int64_t>(entry.file_size(ec));
  }
}

}  // namespace

DiskInventory TakeInventory(const std::string& model_dir) {
  DiskInventory inv;
  for (ScannedRecord& r : ScanRecords(model_dir)) {
    if (r.status.code() == StatusCode::kUnimplemented) {
      inv.other_format.push_back(std::move(r));
    } else if (r.status.code() == StatusCode::kUnavailable) {
      inv.foreign.push_back(std::move(r));
    } else if (!r.status.ok()) {
      inv.damaged.push_back(std::move(r));
    } else {
      inv.record_bytes += r.file_bytes;
      inv.records.push_back(std::move(r));
    }
  }
  CountFiles(model_dir + "/" + kQuarantineDirName, &inv.quarantined_files, &inv.quarantined_bytes);
  CountFiles(model_dir + "/" + kTmpDirName, &inv.temporary_files, nullptr);

  std::unordered_map<Hash128, size_t, Hash128Hasher> blocks;
  std::vector<size_t> snapshots;
  for (size_t i = 0; i < inv.records.size(); ++i) {
    if (inv.records[i].meta.is_snapshot) {
      snapshots.push_back(i);
    } else {
      blocks[inv.records[i].meta.key] = i;
    }
  }
  // The block chain of a record, first block first; false when a parent is missing.
  auto chain = [&](const DiskRecordMeta& meta, std::vector<size_t>* out) {
    out->clear();
    for (Hash128 key = meta.parent_key; !(key == Hash128{});) {
      auto it = blocks.find(key);
      if (it == blocks.end()) return false;
      out->push_back(it->second);
      key = inv.records[it->second].meta.parent_key;
    }
    std::reverse(out->begin(), out->end());
    return true;
  };
  std::vector<size_t> path;
  for (const ScannedRecord& r : inv.records) {
    if (!chain(r.meta, &path)) inv.orphans.push_back(r.name);
  }

  // For each reachable snapshot: the snapshots on its path (their position, tail and parent fit).
  std::unordered_set<size_t> extended;
  std::vector<std::pair<size_t, std::vector<size_t>>> paths;
  for (size_t s : snapshots) {
    const DiskRecordMeta& leaf = inv.records[s].meta;
    if (!chain(leaf, &path)) continue;
    std::unordered_set<Hash128, Hash128Hasher> on_path = {Hash128{}};
    std::vector<int32_t> ids;
    for (size_t b : path) {
      on_path.insert(inv.records[b].meta.key);
      ids.insert(ids.end(), inv.records[b].meta.ids.begin(), inv.records[b].meta.ids.end());
    }
    ids.insert(ids.end(), leaf.ids.begin(), leaf.ids.end());
    std::vector<size_t> members;
    for (size_t o : snapshots) {
      const DiskRecordMeta& m = inv.records[o].meta;
      if (o == s || m.end_tokens >= leaf.end_tokens || !on_path.count(m.parent_key)) continue;
      if (std::equal(m.ids.begin(), m.ids.end(), ids.begin() + m.begin_tokens)) {
        members.push_back(o);
        extended.insert(o);
      }
    }
    members.push_back(s);
    paths.push_back({s, std::move(members)});
  }
  for (auto& [leaf, members] : paths) {
    if (extended.count(leaf)) continue;
    DiskConversation c;
    const DiskRecordMeta& meta = inv.records[leaf].meta;
    c.tokens = meta.end_tokens;
    chain(meta, &path);
    c.blocks = static_cast<int64_t>(path.size());
    for (size_t b : path) {
      c.bytes += inv.records[b].file_bytes;
      c.newest_unix_s = std::max(c.newest_unix_s, inv.records[b].meta.written_unix_s);
    }
    std::sort(members.begin(), members.end(), [&](size_t a, size_t b) {
      return inv.records[a].meta.end_tokens < inv.records[b].meta.end_tokens;
    });
    for (size_t m : members) {
      c.bytes += inv.records[m].file_bytes;
      c.newest_unix_s = std::max(c.newest_unix_s, inv.records[m].meta.written_unix_s);
    }
    c.snapshots = std::move(members);
    inv.conversations.push_back(std::move(c));
  }
  std::sort(inv.conversations.begin(), inv.conversations.end(),
            [](const DiskConversation& a, const DiskConversation& b) {
              return a.newest_unix_s > b.newest_unix_s;
            });
  return inv;
}

}  // namespace ds::cache
