// File-system steps of the disk tier: private directories, atomic record writes (temporary file,
// fsync, rename, fsync of the directory), reading records back, quarantine, and the scan that
// lists a directory's records from their headers alone.
// Thread safety: free functions; callers serialise writes to one directory.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "cache/disk_record.h"

namespace ds::cache {

inline constexpr const char* kTmpDirName = "tmp";
inline constexpr const char* kQuarantineDirName = "quarantine";

// A directory of the cache: created with its missing parents, mode 0700, or an existing one
// checked. It must be a real directory (not a symlink) owned by this process's effective user and
// writable by no one else, or it is refused with an error that says why; group and other read
// bits are cleared. Fails too when it cannot be created or written.
Status EnsurePrivateDirectory(const std::string& dir);

// The same for the cache's top directory (--cache-dir), which the user names: it may be a
// symlink, and an existing one we own is tightened to 0700 whatever its mode.
Status EnsureCacheRoot(const std::string& dir);

// Writes header + payload to dir/name atomically, mode 0600: readers see the old state or the
// whole new file, never a torn one, and a crash leaves at most a file in dir/tmp.
Status WriteRecordAtomically(const std::string& dir, const std::string& name,
                             std::span<const uint8_t> header, std::span<const uint8_t> payload);

// Reads a whole record: its meta and payload. Checks the header checksum, the file size and, when
// `verify_payload`, the payload checksum. Only a regular file is a record: a symlink is never
// followed and a FIFO never waited on (Unavailable, as for a file that cannot be opened).
Status ReadRecord(const std::string& path, bool verify_payload, DiskRecordMeta* meta,
                  std::vector<uint8_t>* payload);

// Moves a damaged record into dir/quarantine, where it is never read again; deletes it when
// quarantine/ cannot be made or is not private (see EnsurePrivateDirectory).
void Quarantine(const std::string& dir, const std::string& name);

struct ScannedRecord {
  std::string name;
  int64_t file_bytes = 0;
  // OK; Unimplemented for another format version; DataLoss when damaged; Unavailable when it is
  // no record at all (a symlink, FIFO or other non-regular file) or cannot be opened.
  Status status;
  DiskRecordMeta meta;  // header fields and ids when status is OK
};

// Every *.rec entry of `dir`, from headers only (payloads are not read). Returns promptly whatever
// the entries are (see ReadRecord).
std::vector<ScannedRecord> ScanRecords(const std::string& dir);

// Deletes files left in dir/tmp by interrupted writes of processes no longer running; returns
// how many.
int64_t RemoveTemporaryFiles(const std::string& dir);

}  // namespace ds::cache
