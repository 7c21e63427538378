// GGUF v2/v3 reader and writer.
// The reader validates everything it reads (magic, version, counts, string lengths, value types,
// array nesting, tensor dims, dtypes, duplicate keys and names, alignment, offsets and sizes
// inside the file) and reports the first problem as a Status "<display_name>: <where>: <what>"
// (InvalidArgument; Unimplemented for v1, v4+ and big-endian files); it never crashes on a
// malformed file, and what a file can make it allocate is bounded (kMax* below). Tensor data is
// not copied: a File views an mmap'd file or a caller-owned buffer that must outlive it.
// The Writer treats inconsistent input (a Value whose type disagrees with its data, tensor data
// of the wrong size) as a programmer error: DS_CHECK.
// Thread safety: a File is immutable after Open and may be read from any thread; a Writer is a
// plain value for one thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/function_ref.h"
#include "base/status.h"
#include "tensor/dtype.h"

namespace ds::gguf {

enum class ValueType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

// "u8", "i32", "f64", "string", "array", ...
std::string_view ValueTypeName(ValueType type);

// Data alignment when the file has no `general.alignment` key (a u32, a power of two).
inline constexpr uint64_t kDefaultAlignment = 32;
inline constexpr std::string_view kAlignmentKey = "general.alignment";

// Limits that bound what a hostile or corrupt file can make the reader allocate (a metadata value
// costs ~50 bytes of memory however few bytes it takes in the file). Real files stay far below:
// a 262k-token vocabulary with scores, types and merges is ~1.3M values, strings are < 1 MiB,
// models have < 10k tensors.
inline constexpr uint64_t kMaxMetadataValues = uint64_t{1} << 22;  // keys + array elements
inline constexpr uint64_t kMaxStringBytes = uint64_t{64} << 20;
inline constexpr uint64_t kMaxTensors = uint64_t{1} << 20;

struct Value;
struct Array {
  ValueType element_type = ValueType::kUint8;
  std::vector<Value> items;
};

// One metadata value. Integers of every width are held as int64_t or uint64_t (by signedness),
// floats as double; `type` remembers the width stored in the file.
struct Value {
  ValueType type = ValueType::kUint8;
  std::variant<uint64_t, int64_t, double, bool, std::string, Array> data;

  static Value U8(uint8_t v) { return {ValueType::kUint8, uint64_t{v}}; }
  static Value I8(int8_t v) { return {ValueType::kInt8, int64_t{v}}; }
  static Value U16(uint16_t v) { return {ValueType::kUint16, uint64_t{v}}; }
  static Value I16(int16_t v) { return {ValueType::kInt16, int64_t{v}}; }
  static Value U32(uint32_t v) { return {ValueType::kUint32, uint64_t{v}}; }
  static Value I32(int32_t v) { return {ValueType::kInt32, int64_t{v}}; }
  static Value U64(uint64_t v) { return {ValueType::kUint64, v}; }
  static Value I64(int64_t v) { return {ValueType::kInt64, v}; }
  static Value F32(float v) { return {ValueType::kFloat32, double{v}}; }
  static Value F64(double v) { return {ValueType::kFloat64, v}; }
  static Value Bool(bool v) { return {ValueType::kBool, v}; }
  static Value Str(std::string v) { return {ValueType::kString, std::move(v)}; }
  static Value Arr(ValueType element_type, std::vector<Value> items) {
    return {ValueType::kArray, Array{element_type, std::move(items)}};
  }
};

struct TensorInfo {
  std::string name;
  std::vector<int64_t> ne;  // GGUF order: ne[0] varies fastest (row length)
  tensor::DType type = tensor::DType::kF32;
  uint64_t offset = 0;  // from the start of the data section
  uint64_t size_bytes = 0;
  const uint8_t* data = nullptr;  // inside the file's bytes

  int64_t num_elements() const;
  // ne[1] * ne[2] * ...: how many rows of ne[0] elements.
  int64_t num_rows() const;
};

// Where File::Open keeps a file's bytes.
enum class Residency {
  // Read into the process's memory on 2 MiB pages where the kernel offers transparent huge
  // pages and the system has the memory for a copy (else mapped: CopyFitsInMemory). A decode
  // step reads every active weight once, matrix after matrix: over the 4 KiB pages of a mapping,
  // each a page-table walk (nested in a virtual machine), the bench model decoded 9-12% slower
  // on one machine of ours.
  kHugePages,
  // Mapped read-only: opens without a copy, and processes that map the file share its pages.
  kMapped,
};

// Whether a copy of a file of `file_bytes` leaves the system at least 1 GiB or a tenth of what it
// had available (`available_bytes`, -1 when unknown), whichever is more: a model larger than the
// memory can only be mapped and paged in, and a copy would have the process killed.
bool CopyFitsInMemory(uint64_t file_bytes, int64_t available_bytes);

class File {
 public:
  // Opens the file and keeps its bytes as `residency` asks. Errors name the path and the problem.
  static StatusOr<std::unique_ptr<File>> Open(const std::string& path,
                                              Residency residency = Residency::kHugePages);
  // Parses bytes owned by the caller, which must outlive the File.
  static StatusOr<std::unique_ptr<File>> FromBuffer(std::span<const uint8_t> bytes,
                                                    std::string display_name);
  // The same for bytes the File may rewrite tensors in (RewriteTensorOnce).
  static StatusOr<std::unique_ptr<File>> FromWritableBuffer(std::span<uint8_t> bytes,
                                                            std::string display_name);
  ~File();
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  const std::string& display_name() const { return display_name_; }
  // Where the bytes are: kHugePages only when Open copied them into a buffer asked to be backed
  // by 2 MiB pages (the kernel may still give small ones where it has no huge page free).
  Residency residency() const { return residency_; }
  std::span<const uint8_t> bytes() const { return bytes_; }
  // Where the data section starts in bytes(); TensorInfo::offset is relative to it.
  uint64_t data_offset() const { return data_offset_; }

  const std::vector<std::pair<std::string, Value>>& metadata() const { return metadata_; }
  const Value* Find(std::string_view key) const;
  // Typed getters: NotFound when absent, InvalidArgument (naming the key, the expected and the
  // stored type) when the stored type does not convert. Any integer width converts when the value
  // fits; GetFloat accepts f32 and f64 only; bools are not integers.
  StatusOr<std::string> GetString(std::string_view key) const;
  StatusOr<uint64_t> GetUint(std::string_view key) const;
  StatusOr<int64_t> GetInt(std::string_view key) const;
  StatusOr<double> GetFloat(std::string_view key) const;
  StatusOr<bool> GetBool(std::string_view key) const;
  StatusOr<const Array*> GetArray(std::string_view key) const;

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* FindTensor(std::string_view name) const;

  // Rewrites the bytes of `info` (one of tensors()) in place with `rewrite`, which gets them as
  // writable, unless they were rewritten before: a reader keeping weights in its own layout.
  // Returns whether the bytes are rewritten (now or before); false, leaving them as the file has
  // them, where this File cannot write them (mapped, or a caller's read-only buffer).
  bool RewriteTensorOnce(const TensorInfo& info, FunctionRef<void(uint8_t*)> rewrite);

 private:
  File() = default;
  Status Parse();
  // Copies the mapped bytes into a large buffer and points bytes_ and every tensor at the copy.
  Status CopyToHugePages();

  std::string display_name_;
  std::span<const uint8_t> bytes_;
  void* mapping_ = nullptr;  // non-null when this File owns an mmap of bytes_
  void* buffer_ = nullptr;   // non-null when this File owns a large buffer of bytes_
  Residency residency_ = Residency::kMapped;
  uint32_t version_ = 0;
  uint64_t alignment_ = kDefaultAlignment;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, Value>> metadata_;
  std::map<std::string, size_t, std::less<>> metadata_index_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;
  bool writable_ = false;  // bytes_ may be written: a copy this File owns, or a caller's
  std::set<const TensorInfo*> rewritten_;
};

// Builds a GGUF v3 file in memory. Keys keep insertion order; setting a key twice replaces it.
class Writer {
 public:
  void Set(std::string key, Value value);
  // `data` must hold RowBytes(type, ne[0]) * rows bytes.
  void AddTensor(std::string name, std::vector<int64_t> ne, tensor::DType type,
                 std::vector<uint8_t> data);
  // Remove a key or a tensor when present (tests build files with one thing missing).
  void Erase(std::string_view key);
  void EraseTensor(std::string_view name);
  // Header, keys in order, tensor infos, then each tensor's data padded to the alignment:
  // `general.alignment` when set (REQUIRES: a u32 power of two), else kDefaultAlignment.
  std::vector<uint8_t> Serialize() const;
  // Writes atomically: a temporary in the same directory, fsync, rename over `path`, then fsync
  // of the directory. On error the temporary is removed and `path` is untouched.
  Status WriteFile(const std::string& path) const;

 private:
  struct PendingTensor {
    std::string name;
    std::vector<int64_t> ne;
    tensor::DType type;
    std::vector<uint8_t> data;
  };
  std::vector<std::pair<std::string, Value>> metadata_;
  std::vector<PendingTensor> tensors_;
};

}  // namespace ds::gguf
