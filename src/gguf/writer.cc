// GGUF v3 serialization. What the caller hands the Writer comes from the program itself (a model
// maker, a test), so inconsistent input is a programmer error and CHECK-fails: a Value whose
// `type` disagrees with what it holds or does not fit, or tensor data that does not match the
// tensor's shape.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <system_error>
#include <utility>

#include "base/check.h"
#include "gguf/gguf.h"

namespace ds::gguf {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" as a little-endian u32
constexpr uint32_t kVersion = 3;

uint64_t AlignUp(uint64_t n, uint64_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

// Appends little-endian scalars and GGUF strings to a byte vector.
class ByteSink {
 public:
  explicit ByteSink(std::vector<uint8_t>* out) : out_(out) {}

  template <typename T>
  void Put(T value) {
    static_assert(std::is_arithmetic_v<T> && std::endian::native == std::endian::little);
    const auto* raw = reinterpret_cast<const uint8_t*>(&value);
    out_->insert(out_->end(), raw, raw + sizeof(T));
  }
  void PutString(std::string_view text) {
    Put<uint64_t>(text.size());
    out_->insert(out_->end(), text.begin(), text.end());
  }
  void PutBytes(const std::vector<uint8_t>& bytes) {
    out_->insert(out_->end(), bytes.begin(), bytes.end());
  }
  void PadTo(uint64_t alignment) { out_->resize(AlignUp(out_->size(), alignment), 0); }

 private:
  std::vector<uint8_t>* out_;
};

uint64_t UnsignedOf(const Value& value, uint64_t max) {
  const uint64_t* held = std::get_if<uint64_t>(&value.data);
  DS_CHECK_MSG(held != nullptr && *held <= max, "unsigned GGUF value is not a fitting uint64_t");
  return *held;
}

int64_t SignedOf(const Value& value, int64_t min, int64_t max) {
  const int64_t* held = std::get_if<int64_t>(&value.data);
  DS_CHECK_MSG(held != nullptr && *held >= min && *held <= max,
               "signed GGUF value is not a fitting int64_t");
  return *held;
}

double FloatOf(const Value& value) {
  const double* held = std::get_if<double>(&value.data);
  DS_CHECK_MSG(held != nullptr, "float GGUF value does not hold a double");
  return *held;
}

void PutPayload(ByteSink& sink, const Value& value);

void PutArray(ByteSink& sink, const Array& array) {
  sink.Put<uint32_t>(static_cast<uint32_t>(array.element_type));
  sink.Put<uint64_t>(array.items.size());
  for (const Value& item : array.items) {
    DS_CHECK_MSG(item.type == array.element_type, "array item type differs from element_type");
    PutPayload(sink, item);
  }
}

// Writes the value without its type tag (array items carry none).
void PutPayload(ByteSink& sink, const Value& value) {
  switch (value.type) {
    case ValueType::kUint8:
      sink.Put(static_cast<uint8_t>(UnsignedOf(value, UINT8_MAX)));
      return;
    case ValueType::kInt8:
      sink.Put(static_cast<int8_t>(SignedOf(value, INT8_MIN, INT8_MAX)));
      return;
    case ValueType::kUint16:
      sink.Put(static_cast<uint16_t>(UnsignedOf(value, UINT16_MAX)));
      return;
    case ValueType::kInt16:
      sink.Put(static_cast<int16_t>(SignedOf(value, INT16_MIN, INT16_MAX)));
      return;
    case ValueType::kUint32:
      sink.Put(static_cast<uint32_t>(UnsignedOf(value, UINT32_MAX)));
      return;
    case ValueType::kInt32:
      sink.Put(static_cast<int32_t>(SignedOf(value, INT32_MIN, INT32_MAX)));
      return;
    case ValueType::kUint64:
      sink.Put(UnsignedOf(value, UINT64_MAX));
      return;
    case ValueType::kInt64:
      sink.Put(SignedOf(value, INT64_MIN, INT64_MAX));
      return;
    case ValueType::kFloat32: {
      const double held = FloatOf(value);
      // Converting a finite double beyond the float range is undefined behaviour.
      DS_CHECK_MSG(!std::isfinite(held) || std::fabs(held) <= FLT_MAX, "f32 value out of range");
      sink.Put(static_cast<float>(held));
      return;
    }
    case ValueType::kFloat64:
      sink.Put(FloatOf(value));
      return;
    case ValueType::kBool: {
      const bool* held = std::get_if<bool>(&value.data);
      DS_CHECK_MSG(held != nullptr, "bool GGUF value does not hold a bool");
      sink.Put<uint8_t>(*held ? 1 : 0);
      return;
    }
    case ValueType::kString: {
      const std::string* held = std::get_if<std::string>(&value.data);
      DS_CHECK_MSG(held != nullptr, "string GGUF value does not hold a string");
      sink.PutString(*held);
      return;
    }
    case ValueType::kArray: {
      const Array* held = std::get_if<Array>(&value.data);
      DS_CHECK_MSG(held != nullptr, "array GGUF value does not hold an Array");
      PutArray(sink, *held);
      return;
    }
  }
  DS_CHECK_MSG(false, "GGUF value has an undeclared ValueType");
}

uint64_t AlignmentOf(const std::vector<std::pair<std::string, Value>>& metadata) {
  for (const auto& [key, value] : metadata) {
    if (key != kAlignmentKey) continue;
    DS_CHECK_MSG(value.type == ValueType::kUint32, "general.alignment must be a u32");
    const uint64_t alignment = UnsignedOf(value, UINT32_MAX);
    DS_CHECK_MSG(std::has_single_bit(alignment), "general.alignment must be a power of two");
    return alignment;
  }
  return kDefaultAlignment;
}

std::string ErrnoMessage(int error) { return std::generic_category().message(error); }

// Writes all of `bytes` to `fd`, retrying short writes and EINTR.
Status WriteAll(int fd, const std::vector<uint8_t>& bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return UnavailableError(path + ": write failed: " + ErrnoMessage(errno));
    done += static_cast<size_t>(n);
  }
  return OkStatus();
}

// Makes the rename durable: a crash after WriteFile returns must not lose the new name.
Status SyncDirectoryOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return UnavailableError(dir + ": cannot open directory: " + ErrnoMessage(errno));
  const int result = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (result != 0) return UnavailableError(dir + ": fsync failed: " + ErrnoMessage(error));
  return OkStatus();
}

}  // namespace

void Writer::Set(std::string key, Value value) {
  DS_CHECK_MSG(!key.empty(), "GGUF keys must not be empty");
  for (auto& [existing_key, existing_value] : metadata_) {
    if (existing_key == key) {
      existing_value = std::move(value);
      return;
    }
  }
  metadata_.emplace_back(std::move(key), std::move(value));
}

void Writer::Erase(std::string_view key) {
  std::erase_if(metadata_, [&](const auto& entry) { return entry.first == key; });
}

void Writer::EraseTensor(std::string_view name) {
  std::erase_if(tensors_, [&](const PendingTensor& t) { return t.name == name; });
}

void Writer::AddTensor(std::string name, std::vector<int64_t> ne, tensor::DType type,
                       std::vector<uint8_t> data) {
  DS_CHECK_MSG(!name.empty(), "tensor names must not be empty");
  for (const PendingTensor& t : tensors_) DS_CHECK_MSG(t.name != name, "duplicate tensor name");
  DS_CHECK_MSG(!ne.empty() && ne.size() <= 4, "a GGUF tensor has 1 to 4 dimensions");
  int64_t rows = 1;
  for (size_t i = 0; i < ne.size(); ++i) {
    DS_CHECK_MSG(ne[i] > 0, "tensor dimensions must be positive");
    if (i > 0) rows *= ne[i];
  }
  DS_CHECK_MSG(ne[0] % tensor::Traits(type).block_elems == 0,
               "row length must be a multiple of the dtype block size");
  DS_CHECK_MSG(static_cast<int64_t>(data.size()) == tensor::RowBytes(type, ne[0]) * rows,
               "tensor data size does not match its shape and dtype");
  tensors_.push_back({std::move(name), std::move(ne), type, std::move(data)});
}

std::vector<uint8_t> Writer::Serialize() const {
  const uint64_t alignment = AlignmentOf(metadata_);
  std::vector<uint8_t> bytes;
  ByteSink sink(&bytes);
  sink.Put(kMagic);
  sink.Put(kVersion);
  sink.Put<uint64_t>(tensors_.size());
  sink.Put<uint64_t>(metadata_.size());
  for (const auto& [key, value] : metadata_) {
    sink.PutString(key);
    sink.Put(static_cast<uint32_t>(value.type));
    PutPayload(sink, value);
  }
  uint64_t offset = 0;  // of the next tensor, from the start of the data section
  for (const PendingTensor& t : tensors_) {
    sink.PutString(t.name);
    sink.Put(static_cast<uint32_t>(t.ne.size()));
    for (int64_t dim : t.ne) sink.Put(static_cast<uint64_t>(dim));
    sink.Put(static_cast<uint32_t>(t.type));
    sink.Put(offset);
    offset = AlignUp(offset + t.data.size(), alignment);
  }
  sink.PadTo(alignment);
  for (const PendingTensor& t : tensors_) {
    sink.PutBytes(t.data);
    sink.PadTo(alignment);
  }
  return bytes;
}

Status Writer::WriteFile(const std::string& path) const {
  const std::vector<uint8_t> bytes = Serialize();
  // The temporary lives in the target's directory so that rename() is atomic (same file system).
  std::string tmp_path = path + ".tmp.XXXXXX";
  const int fd = ::mkostemp(tmp_path.data(), O_CLOEXEC);
  if (fd < 0) return UnavailableError(path + ": cannot create temporary: " + ErrnoMessage(errno));
  Status status = WriteAll(fd, bytes, tmp_path);
  if (status.ok() && ::fchmod(fd, 0644) != 0) {
    status = UnavailableError(tmp_path + ": fchmod failed: " + ErrnoMessage(errno));
  }
  if (status.ok() && ::fsync(fd) != 0) {
    status = UnavailableError(tmp_path + ": fsync failed: " + ErrnoMessage(errno));
  }
  if (::close(fd) != 0 && status.ok()) {
    status = UnavailableError(tmp_path + ": close failed: " + ErrnoMessage(errno));
  }
  if (status.ok() && ::rename(tmp_path.c_str(), path.c_str()) != 0) {
    status = UnavailableError(path + ": rename from temporary failed: " + ErrnoMessage(errno));
  }
  if (!status.ok()) {
    ::unlink(tmp_path.c_str());
    return status;
  }
  return SyncDirectoryOf(path);
}

}  // namespace ds::gguf
