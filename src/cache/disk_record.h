// The file format of one disk-tier record (a KV block or a snapshot), self-describing so that the
// index can be rebuilt from the files alone and a restore can check everything it reads:
//
//   fixed header (kFixedHeaderBytes, little-endian): magic "DSCR", format version, record kind,
//     snapshot kind, layout length, begin and end token positions, chain key, parent key,
//     payload bytes, xxh3-128 of the payload, write time;
//   layout: text naming the payload's tensors with shapes and dtypes;
//   ids: int32 token ids [begin, end);
//   xxh3-64 of everything above;
//   payload.
//
// A block's key is the chain hash H_j of its prefix and its parent H_{j-1}; a snapshot's key
// hashes its tail ids onto its parent, the key of the last whole block before it (zero at the
// start). Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "cache/types.h"

namespace ds::cache {

inline constexpr uint32_t kDiskFormatVersion = 1;
inline constexpr int64_t kFixedHeaderBytes = 96;
inline constexpr int64_t kMaxRecordIds = int64_t{1} << 24;
inline constexpr int64_t kMaxLayoutBytes = 4096;

struct DiskRecordMeta {
  bool is_snapshot = false;
  SnapshotKind kind = SnapshotKind::kMessageBoundary;  // snapshots only
  int64_t begin_tokens = 0;
  int64_t end_tokens = 0;  // a snapshot's position
  Hash128 key;
  Hash128 parent_key;
  std::string layout;
  std::vector<int32_t> ids;  // [begin_tokens, end_tokens)
  int64_t payload_bytes = 0;
  Hash128 payload_checksum;
  int64_t written_unix_s = 0;
};

// Header, layout, ids and their checksum: the bytes before the payload.
std::vector<uint8_t> EncodeRecordHeader(const DiskRecordMeta& meta);

// Bytes EncodeRecordHeader produces for `meta`'s layout and ids.
int64_t RecordHeaderBytes(int64_t layout_bytes, int64_t num_ids);

// Parses the fixed header only (kFixedHeaderBytes): how many more header bytes follow.
// FailedPrecondition-like kUnimplemented for another format version (such records are ignored,
// never deleted); DataLoss for anything malformed.
StatusOr<int64_t> ParseFixedHeader(std::span<const uint8_t> fixed, DiskRecordMeta* meta);

// Parses and checks a whole header (fixed part, layout, ids, checksum).
StatusOr<DiskRecordMeta> DecodeRecordHeader(std::span<const uint8_t> header);

Hash128 PayloadChecksum(std::span<const uint8_t> payload);

// Keys: see the file comment. `seed` is the model fingerprint.
Hash128 BlockKey(const Hash128& parent, std::span<const int32_t> ids, uint64_t seed);
Hash128 SnapshotKey(const Hash128& parent, std::span<const int32_t> tail_ids, uint64_t seed);

// "b-<key>.rec" or "s-<key>.rec", 32 hex digits of key.
std::string RecordFileName(bool is_snapshot, const Hash128& key);

}  // namespace ds::cache
