// Bounds-checked little-endian reads from an untrusted byte span, for the GGUF reader (internal).
// Every read either succeeds or returns an InvalidArgument Status naming what was being read, the
// offset and the file size; nothing ever reads past the span. Messages do not name the file:
// the caller prefixes the display name once, at the top.
// Thread safety: a Cursor is a small value owned by one parse.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "base/status.h"
#include "gguf/gguf.h"

namespace ds::gguf::internal {

static_assert(std::endian::native == std::endian::little,
              "GGUF is little-endian; the reader copies scalars without swapping");

// "<context>: <message>", same code: errors gain context as they travel up the parse.
inline Status Annotate(const Status& status, std::string_view context) {
  if (status.ok()) return status;
  return Status(status.code(), std::string(context) + ": " + status.message());
}

class Cursor {
 public:
  explicit Cursor(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  uint64_t offset() const { return offset_; }
  uint64_t size() const { return bytes_.size(); }
  uint64_t remaining() const { return bytes_.size() - offset_; }

  // `what` names the field for the error message ("tensor count", "string length", ...).
  template <typename T>
  Status Read(T* out, std::string_view what) {
    static_assert(std::is_arithmetic_v<T>);
    if (remaining() < sizeof(T)) return Truncated(what, sizeof(T));
    std::memcpy(out, bytes_.data() + offset_, sizeof(T));
    offset_ += sizeof(T);
    return OkStatus();
  }

  // A GGUF string: u64 byte length, then that many bytes (no terminator).
  Status ReadString(std::string* out, std::string_view what) {
    const uint64_t length_offset = offset_;
    uint64_t length = 0;
    DS_RETURN_IF_ERROR(Read(&length, what));
    if (length > remaining()) {
      return InvalidArgumentError(std::string(what) + " length " + std::to_string(length) +
                                  " at offset " + std::to_string(length_offset) +
                                  " extends past end of file (" + std::to_string(size()) +
                                  " bytes)");
    }
    if (length > kMaxStringBytes) {
      return InvalidArgumentError(std::string(what) + " length " + std::to_string(length) +
                                  " at offset " + std::to_string(length_offset) +
                                  " exceeds the limit of " + std::to_string(kMaxStringBytes) +
                                  " bytes");
    }
    out->assign(reinterpret_cast<const char*>(bytes_.data() + offset_), length);
    offset_ += length;
    return OkStatus();
  }

 private:
  Status Truncated(std::string_view what, uint64_t num_bytes) const {
    return InvalidArgumentError("truncated: " + std::string(what) + " (" +
                                std::to_string(num_bytes) + " bytes) at offset " +
                                std::to_string(offset_) + " extends past end of file (" +
                                std::to_string(size()) + " bytes)");
  }

  std::span<const uint8_t> bytes_;
  uint64_t offset_ = 0;  // invariant: offset_ <= bytes_.size()
};

}  // namespace ds::gguf::internal
