// GGUF parsing: header, metadata, tensor infos and the data section layout, all validated
// against the file size before use. Each helper returns an error without the file name; Parse()
// prefixes display_name once.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

#include "base/large_buffer.h"
#include "base/system_memory.h"
#include "gguf/cursor.h"
#include "gguf/gguf.h"
#include "gguf/value_parser.h"

namespace ds::gguf {
namespace {

using internal::Annotate;
using internal::Cursor;

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr uint32_t kMaxDims = 4;
// Fewest bytes of one key/value (1-byte key, type, 1-byte value) and of one tensor info (1-byte
// name, n_dims, one dim, type, offset): the header's counts must fit in the bytes that follow.
constexpr uint64_t kMinKvBytes = 8 + 1 + 4 + 1;
constexpr uint64_t kMinTensorInfoBytes = 8 + 1 + 4 + 8 + 4 + 8;

struct Header {
  uint32_t version = 0;
  uint64_t num_tensors = 0;
  uint64_t num_kvs = 0;
};

std::string Quote(std::string_view name) {
  std::string quoted;  // built by appends: GCC 12 warns (-Wrestrict) on "'" + name + "'"
  quoted.reserve(name.size() + 2);
  quoted.append(1, '\'').append(name).append(1, '\'');
  return quoted;
}

std::string ErrnoMessage(int error) { return std::generic_category().message(error); }

Status CheckVersion(uint32_t version) {
  if (version == 2 || version == 3) return OkStatus();
  if (version == 1) {
    return UnimplementedError(
        "GGUF version 1 is not supported (it uses 32-bit counts); only versions 2 and 3 are");
  }
  if (version == 0x02000000 || version == 0x03000000) {
    return UnimplementedError("version " + std::to_string(version) +
                              " is 2 or 3 byte-swapped: big-endian GGUF files are not supported");
  }
  return UnimplementedError("GGUF version " + std::to_string(version) +
                            " is not supported; only versions 2 and 3 are");
}

StatusOr<Header> ReadHeader(Cursor& cursor) {
  uint32_t magic = 0;
  DS_RETURN_IF_ERROR(cursor.Read(&magic, "magic"));
  if (magic != kMagic) return InvalidArgumentError("not a GGUF file (the magic is not 'GGUF')");
  Header header;
  DS_RETURN_IF_ERROR(cursor.Read(&header.version, "version"));
  DS_RETURN_IF_ERROR(CheckVersion(header.version));
  DS_RETURN_IF_ERROR(cursor.Read(&header.num_tensors, "tensor count"));
  DS_RETURN_IF_ERROR(cursor.Read(&header.num_kvs, "metadata key/value count"));
  const uint64_t left = cursor.remaining();
  if (header.num_kvs > kMaxMetadataValues) {
    return InvalidArgumentError("metadata key/value count " + std::to_string(header.num_kvs) +
                                " exceeds the limit of " + std::to_string(kMaxMetadataValues));
  }
  if (header.num_tensors > kMaxTensors) {
    return InvalidArgumentError("tensor count " + std::to_string(header.num_tensors) +
                                " exceeds the limit of " + std::to_string(kMaxTensors));
  }
  if (header.num_kvs > left / kMinKvBytes) {
    return InvalidArgumentError("metadata key/value count " + std::to_string(header.num_kvs) +
                                " cannot fit in the " + std::to_string(left) +
                                " bytes after the header");
  }
  if (header.num_tensors > (left - header.num_kvs * kMinKvBytes) / kMinTensorInfoBytes) {
    return InvalidArgumentError("tensor count " + std::to_string(header.num_tensors) +
                                " cannot fit in the " + std::to_string(left) +
                                " bytes after the header");
  }
  return header;
}

Status ReadKeyValue(Cursor& cursor, uint64_t index, uint64_t* values_left, std::string* key,
                    Value* value) {
  const std::string position = "key #" + std::to_string(index);
  DS_RETURN_IF_ERROR(Annotate(cursor.ReadString(key, "key name"), position));
  if (key->empty()) return InvalidArgumentError(position + " has an empty name");
  const std::string context = "key " + Quote(*key);
  uint32_t raw_type = 0;
  DS_RETURN_IF_ERROR(Annotate(cursor.Read(&raw_type, "value type"), context));
  const std::optional<ValueType> type = internal::ToValueType(raw_type);
  if (!type) {
    return InvalidArgumentError(context + ": unknown value type " + std::to_string(raw_type));
  }
  return Annotate(internal::ReadValue(cursor, *type, /*depth=*/0, values_left, value), context);
}

StatusOr<uint64_t> AlignmentOf(const Value* value) {
  if (value == nullptr) return kDefaultAlignment;
  const std::string context = "key " + Quote(kAlignmentKey);
  if (value->type != ValueType::kUint32) {
    return InvalidArgumentError(context + " has type " + std::string(ValueTypeName(value->type)) +
                                ", expected u32");
  }
  const uint64_t alignment = std::get<uint64_t>(value->data);
  if (!std::has_single_bit(alignment)) {
    return InvalidArgumentError(context + " is " + std::to_string(alignment) +
                                "; it must be a nonzero power of two");
  }
  return alignment;
}

// Reads the dims and checks they are positive and their product fits int64.
Status ReadDims(Cursor& cursor, const std::string& context, std::vector<int64_t>* ne) {
  uint32_t num_dims = 0;
  DS_RETURN_IF_ERROR(Annotate(cursor.Read(&num_dims, "n_dims"), context));
  if (num_dims == 0 || num_dims > kMaxDims) {
    return InvalidArgumentError(context + ": n_dims " + std::to_string(num_dims) +
                                " is outside [1, " + std::to_string(kMaxDims) + "]");
  }
  int64_t num_elements = 1;
  for (uint32_t d = 0; d < num_dims; ++d) {
    uint64_t dim = 0;
    DS_RETURN_IF_ERROR(Annotate(cursor.Read(&dim, "dimension"), context));
    if (dim == 0 || dim > static_cast<uint64_t>(INT64_MAX)) {
      return InvalidArgumentError(context + ": dimension " + std::to_string(d) + " is " +
                                  std::to_string(dim) + "; it must be in [1, 2^63)");
    }
    if (__builtin_mul_overflow(num_elements, static_cast<int64_t>(dim), &num_elements)) {
      return InvalidArgumentError(context + ": element count overflows int64");
    }
    ne->push_back(static_cast<int64_t>(dim));
  }
  return OkStatus();
}

// Reads one tensor info; `data` stays null until the data section is placed.
Status ReadTensorInfo(Cursor& cursor, uint64_t index, uint64_t alignment, TensorInfo* info) {
  const std::string position = "tensor #" + std::to_string(index);
  DS_RETURN_IF_ERROR(Annotate(cursor.ReadString(&info->name, "tensor name"), position));
  if (info->name.empty()) return InvalidArgumentError(position + " has an empty name");
  const std::string context = "tensor " + Quote(info->name);
  DS_RETURN_IF_ERROR(ReadDims(cursor, context, &info->ne));
  uint32_t raw_type = 0;
  DS_RETURN_IF_ERROR(Annotate(cursor.Read(&raw_type, "ggml type"), context));
  const std::optional<tensor::DTypeTraits> traits = tensor::FindDType(raw_type);
  if (!traits) {
    return InvalidArgumentError(context + ": unknown ggml type " + std::to_string(raw_type));
  }
  info->type = traits->type;
  if (info->ne[0] % traits->block_elems != 0) {
    return InvalidArgumentError(context + ": row length " + std::to_string(info->ne[0]) +
                                " is not a multiple of the " + std::string(traits->name) +
                                " block size " + std::to_string(traits->block_elems));
  }
  const uint64_t num_blocks = static_cast<uint64_t>(info->num_elements() / traits->block_elems);
  if (__builtin_mul_overflow(num_blocks, static_cast<uint64_t>(traits->block_bytes),
                             &info->size_bytes)) {
    return InvalidArgumentError(context + ": size in bytes overflows uint64");
  }
  DS_RETURN_IF_ERROR(Annotate(cursor.Read(&info->offset, "data offset"), context));
  if (info->offset % alignment != 0) {
    return InvalidArgumentError(context + ": data offset " + std::to_string(info->offset) +
                                " is not a multiple of the alignment " + std::to_string(alignment));
  }
  return OkStatus();
}

std::string U128ToString(unsigned __int128 value) {
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(value % 10)));
    value /= 10;
  } while (value != 0);
  return digits;
}

// Points `info->data` into `bytes` once [data_offset + offset, + size_bytes) is known to fit.
Status PlaceTensorData(std::span<const uint8_t> bytes, uint64_t data_offset, TensorInfo* info) {
  const unsigned __int128 begin = static_cast<unsigned __int128>(data_offset) + info->offset;
  const unsigned __int128 end = begin + info->size_bytes;
  if (end > bytes.size()) {
    return InvalidArgumentError("tensor " + Quote(info->name) + " data [" + U128ToString(begin) +
                                ", " + U128ToString(end) + ") extends past end of file (" +
                                std::to_string(bytes.size()) + " bytes)");
  }
  info->data = bytes.data() + static_cast<size_t>(begin);
  return OkStatus();
}

}  // namespace

int64_t TensorInfo::num_elements() const {
  int64_t n = 1;
  for (int64_t d : ne) n *= d;
  return n;
}

int64_t TensorInfo::num_rows() const {
  int64_t n = 1;
  for (size_t i = 1; i < ne.size(); ++i) n *= ne[i];
  return n;
}

StatusOr<std::unique_ptr<File>> File::Open(const std::string& path, Residency residency) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    const std::string message = path + ": cannot open: " + ErrnoMessage(error);
    return error == ENOENT ? NotFoundError(message) : UnavailableError(message);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgumentError(path + ": not a regular file");
  }
  std::unique_ptr<File> file(new File());
  file->display_name_ = path;
  const size_t size = static_cast<size_t>(st.st_size);
  if (size > 0) {
    void* mapping = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    const int error = errno;
    if (mapping == MAP_FAILED) {
      ::close(fd);
      return ResourceExhaustedError(path + ": cannot mmap " + std::to_string(size) +
                                    " bytes: " + ErrnoMessage(error));
    }
    file->mapping_ = mapping;
    file->bytes_ = {static_cast<const uint8_t*>(mapping), size};
  }
  ::close(fd);  // the mapping keeps the file's pages reachable
  DS_RETURN_IF_ERROR(file->Parse());
  // After the parse, so a file that is not a model is refused before it is read whole.
  if (residency == Residency::kHugePages && file->bytes_.size() >= kHugePageBytes &&
      HugePagesAvailable() && CopyFitsInMemory(file->bytes_.size(), AvailableMemoryBytes())) {
    DS_RETURN_IF_ERROR(file->CopyToHugePages());
  }
  return file;
}

bool CopyFitsInMemory(uint64_t file_bytes, int64_t available_bytes) {
  if (available_bytes < 0) return false;
  const uint64_t available = static_cast<uint64_t>(available_bytes);
  const uint64_t reserve = std::max<uint64_t>(uint64_t{1} << 30, available / 10);
  return available > reserve && file_bytes <= available - reserve;
}

Status File::CopyToHugePages() {
  const size_t size = bytes_.size();
  try {
    buffer_ = AllocateLargeBuffer(size);
  } catch (const std::bad_alloc&) {
    return ResourceExhaustedError(display_name_ + ": cannot allocate " + std::to_string(size) +
                                  " bytes to read the model into (--mmap maps it instead)");
  }
  auto* copy = static_cast<uint8_t*>(buffer_);
  std::memcpy(copy, bytes_.data(), size);
  for (TensorInfo& info : tensors_) info.data = copy + (info.data - bytes_.data());
  ::munmap(mapping_, size);
  mapping_ = nullptr;
  bytes_ = {copy, size};
  writable_ = true;
  residency_ = Residency::kHugePages;
  return OkStatus();
}

StatusOr<std::unique_ptr<File>> File::FromBuffer(std::span<const uint8_t> bytes,
                                                 std::string display_name) {
  std::unique_ptr<File> file(new File());
  file->display_name_ = std::move(display_name);
  file->bytes_ = bytes;
  DS_RETURN_IF_ERROR(file->Parse());
  return file;
}

StatusOr<std::unique_ptr<File>> File::FromWritableBuffer(std::span<uint8_t> bytes,
                                                         std::string display_name) {
  DS_ASSIGN_OR_RETURN(std::unique_ptr<File> file, FromBuffer(bytes, std::move(display_name)));
  file->writable_ = true;
  return file;
}

File::~File() {
  if (mapping_ != nullptr) ::munmap(mapping_, bytes_.size());
  if (buffer_ != nullptr) FreeLargeBuffer(buffer_, bytes_.size());
}

Status File::Parse() {
  Cursor cursor(bytes_);
  const std::string prefix = display_name_;
  StatusOr<Header> header = ReadHeader(cursor);
  if (!header.ok()) return Annotate(header.status(), prefix);
  version_ = header->version;

  // Keys count against the value budget too, so the reserve below is bounded.
  uint64_t values_left = kMaxMetadataValues - header->num_kvs;
  metadata_.reserve(header->num_kvs);
  for (uint64_t i = 0; i < header->num_kvs; ++i) {
    std::string key;
    Value value;
    DS_RETURN_IF_ERROR(Annotate(ReadKeyValue(cursor, i, &values_left, &key, &value), prefix));
    if (!metadata_index_.emplace(key, metadata_.size()).second) {
      return InvalidArgumentError(prefix + ": duplicate key " + Quote(key));
    }
    metadata_.emplace_back(std::move(key), std::move(value));
  }
  StatusOr<uint64_t> alignment = AlignmentOf(Find(kAlignmentKey));
  if (!alignment.ok()) return Annotate(alignment.status(), prefix);
  alignment_ = *alignment;

  tensors_.reserve(header->num_tensors);
  for (uint64_t i = 0; i < header->num_tensors; ++i) {
    TensorInfo info;
    DS_RETURN_IF_ERROR(Annotate(ReadTensorInfo(cursor, i, alignment_, &info), prefix));
    if (!tensor_index_.emplace(info.name, tensors_.size()).second) {
      return InvalidArgumentError(prefix + ": duplicate tensor name " + Quote(info.name));
    }
    tensors_.push_back(std::move(info));
  }

  // The alignment is at most 2^31 and the offset at most the file size, so this cannot wrap.
  data_offset_ = (cursor.offset() + alignment_ - 1) / alignment_ * alignment_;
  for (TensorInfo& info : tensors_) {
    DS_RETURN_IF_ERROR(Annotate(PlaceTensorData(bytes_, data_offset_, &info), prefix));
  }
  return OkStatus();
}

const Value* File::Find(std::string_view key) const {
  auto it = metadata_index_.find(key);
  return it == metadata_index_.end() ? nullptr : &metadata_[it->second].second;
}

const TensorInfo* File::FindTensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

bool File::RewriteTensorOnce(const TensorInfo& info, FunctionRef<void(uint8_t*)> rewrite) {
  if (rewritten_.contains(&info)) return true;
  if (!writable_) return false;
  // bytes_ are read through const pointers everywhere else.
  rewrite(const_cast<uint8_t*>(info.data));
  rewritten_.insert(&info);
  return true;
}

}  // namespace ds::gguf
