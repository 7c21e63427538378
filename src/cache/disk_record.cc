#include "cache/disk_record.h"

#include <xxhash.h>

#include <cstdio>
#include <cstring>

#include "cache/chain_hash.h"

namespace ds::cache {
namespace {

constexpr uint32_t kMagic = 0x52435344;  // "DSCR" little-endian
constexpr uint64_t kSnapshotSalt = 0x5eed5a7a5407c0deULL;

class Writer {
 public:
  explicit Writer(std::vector<uint8_t>* out) : out_(out) {}
  template <typename T>
  void Put(T value) {
    uint8_t bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    out_->insert(out_->end(), bytes, bytes + sizeof(T));
  }
  void PutHash(const Hash128& h) {
    Put(h.low);
    Put(h.high);
  }
  void PutBytes(const void* data, size_t size) {
    if (size == 0) return;  // data may be null then
    const uint8_t* p = static_cast<const uint8_t*>(data);
    out_->insert(out_->end(), p, p + size);
  }

 private:
  std::vector<uint8_t>* out_;
};

class Reader {
 public:
  explicit Reader(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  template <typename T>
  T Get() {
    T value;
    std::memcpy(&value, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return value;
  }
  Hash128 GetHash() {
    Hash128 h;
    h.low = Get<uint64_t>();
    h.high = Get<uint64_t>();
    return h;
  }
  size_t at() const { return at_; }

 private:
  std::span<const uint8_t> bytes_;
  size_t at_ = 0;
};

}  // namespace

int64_t RecordHeaderBytes(int64_t layout_bytes, int64_t num_ids) {
  return kFixedHeaderBytes + layout_bytes + num_ids * 4 + 8;
}

std::vector<uint8_t> EncodeRecordHeader(const DiskRecordMeta& meta) {
  std::vector<uint8_t> out;
  out.reserve(RecordHeaderBytes(meta.layout.size(), meta.ids.size()));
  Writer w(&out);
  w.Put(kMagic);
  w.Put(kDiskFormatVersion);
  w.Put(static_cast<uint8_t>(meta.is_snapshot));
  w.Put(static_cast<uint8_t>(meta.kind));
  w.Put(uint16_t{0});
  w.Put(static_cast<uint32_t>(meta.layout.size()));
  w.Put(meta.begin_tokens);
  w.Put(meta.end_tokens);
  w.PutHash(meta.key);
  w.PutHash(meta.parent_key);
  w.Put(meta.payload_bytes);
  w.PutHash(meta.payload_checksum);
  w.Put(meta.written_unix_s);
  w.PutBytes(meta.layout.data(), meta.layout.size());
  w.PutBytes(meta.ids.data(), meta.ids.size() * sizeof(int32_t));
  w.Put(static_cast<uint64_t>(XXH3_64bits(out.data(), out.size())));
  return out;
}

StatusOr<int64_t> ParseFixedHeader(std::span<const uint8_t> fixed, DiskRecordMeta* meta) {
  if (static_cast<int64_t>(fixed.size()) < kFixedHeaderBytes) {
    return DataLossError("record shorter than its header");
  }
  Reader r(fixed);
  if (r.Get<uint32_t>() != kMagic) return DataLossError("not a deltaserve cache record");
  uint32_t version = r.Get<uint32_t>();
  if (version != kDiskFormatVersion) {
    return UnimplementedError("record format version " + std::to_string(version) +
                              ", this build reads " + std::to_string(kDiskFormatVersion));
  }
  uint8_t is_snapshot = r.Get<uint8_t>();
  uint8_t kind = r.Get<uint8_t>();
  r.Get<uint16_t>();
  uint32_t layout_bytes = r.Get<uint32_t>();
  meta->is_snapshot = is_snapshot == 1;
  meta->kind = static_cast<SnapshotKind>(kind);
  meta->begin_tokens = r.Get<int64_t>();
  meta->end_tokens = r.Get<int64_t>();
  meta->key = r.GetHash();
  meta->parent_key = r.GetHash();
  meta->payload_bytes = r.Get<int64_t>();
  meta->payload_checksum = r.GetHash();
  meta->written_unix_s = r.Get<int64_t>();
  if (is_snapshot > 1 || kind >= kNumSnapshotKinds) return DataLossError("bad record kind");
  if (layout_bytes > kMaxLayoutBytes) return DataLossError("bad layout length");
  if (meta->begin_tokens < 0 || meta->end_tokens < meta->begin_tokens ||
      meta->end_tokens - meta->begin_tokens > kMaxRecordIds ||
      (!meta->is_snapshot && meta->end_tokens == meta->begin_tokens)) {
    return DataLossError("bad token range");
  }
  if (meta->payload_bytes <= 0 || meta->payload_bytes > (int64_t{1} << 40)) {
    return DataLossError("bad payload size");
  }
  return RecordHeaderBytes(layout_bytes, meta->end_tokens - meta->begin_tokens) -
         kFixedHeaderBytes;
}

StatusOr<DiskRecordMeta> DecodeRecordHeader(std::span<const uint8_t> header) {
  DiskRecordMeta meta;
  DS_ASSIGN_OR_RETURN(int64_t rest, ParseFixedHeader(header, &meta));
  if (static_cast<int64_t>(header.size()) != kFixedHeaderBytes + rest) {
    return DataLossError("record header truncated");
  }
  const uint8_t* p = header.data() + kFixedHeaderBytes;
  const int64_t num_ids = meta.end_tokens - meta.begin_tokens;
  const int64_t layout_bytes = rest - num_ids * 4 - 8;
  meta.layout.assign(reinterpret_cast<const char*>(p), layout_bytes);
  meta.ids.resize(num_ids);
  if (num_ids > 0) std::memcpy(meta.ids.data(), p + layout_bytes, num_ids * 4);
  uint64_t stored;
  std::memcpy(&stored, header.data() + header.size() - 8, 8);
  if (stored != XXH3_64bits(header.data(), header.size() - 8)) {
    return DataLossError("record header checksum mismatch");
  }
  return meta;
}

Hash128 PayloadChecksum(std::span<const uint8_t> payload) {
  XXH128_hash_t h = XXH3_128bits(payload.data(), payload.size());
  return Hash128{h.low64, h.high64};
}

Hash128 BlockKey(const Hash128& parent, std::span<const int32_t> ids, uint64_t seed) {
  return Xxh3ChainHash(parent, ids, seed);
}

Hash128 SnapshotKey(const Hash128& parent, std::span<const int32_t> tail_ids, uint64_t seed) {
  return Xxh3ChainHash(parent, tail_ids, seed ^ kSnapshotSalt);
}

std::string RecordFileName(bool is_snapshot, const Hash128& key) {
  char name[48];
  std::snprintf(name, sizeof(name), "%c-%016llx%016llx.rec", is_snapshot ? 's' : 'b',
                static_cast<unsigned long long>(key.high),
                static_cast<unsigned long long>(key.low));
  return name;
}

}  // namespace ds::cache
