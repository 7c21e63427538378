// What a disk-tier directory holds, read from record headers alone, for `deltaserve cache`:
// the conversations (each snapshot no other snapshot extends, with the records on its path),
// records no lookup can reach (orphans), damaged records, records of other formats and entries
// named like records that are none (symlinks, FIFOs) or cannot be read.
// Thread safety: a pure function over the file system.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cache/disk_files.h"

namespace ds::cache {

struct DiskConversation {
  int64_t tokens = 0;               // position of its deepest snapshot
  std::vector<size_t> snapshots;    // indices into DiskInventory::records, by position
  int64_t blocks = 0;               // KV blocks on its path
  int64_t bytes = 0;                // files on its path (shared ones count in every path)
  int64_t newest_unix_s = 0;
};

struct DiskInventory {
  std::vector<ScannedRecord> records;     // readable records of this format
  // Entries of records that cannot be indexed, each with its status saying why:
  std::vector<ScannedRecord> damaged;       // the header is damaged
  std::vector<ScannedRecord> other_format;  // another format version (perhaps a flipped one)
  std::vector<ScannedRecord> foreign;       // *.rec entries that are no records or unreadable
  std::vector<std::string> orphans;         // names of records whose parent block is missing
  std::vector<DiskConversation> conversations;  // newest first
  int64_t record_bytes = 0;
  int64_t quarantined_files = 0;
  int64_t quarantined_bytes = 0;
  int64_t temporary_files = 0;
};

DiskInventory TakeInventory(const std::string& model_dir);

}  // namespace ds::cache
