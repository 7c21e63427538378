// Helpers shared by the gguf tests (not part of the library): a raw little-endian byte builder for
// hand-made, often malformed, files; a Writer filled with every value type and several dtypes;
// a canonical text form of values for comparisons; access to the shared test models.
// Thread safety: none needed (tests are single-threaded).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf.h"

namespace ds::gguf::testing {

// Builds bytes field by field, exactly as the caller spells them, with no validation.
class RawFile {
 public:
  RawFile& U8(uint8_t v) { return Put(v); }
  RawFile& U32(uint32_t v) { return Put(v); }
  RawFile& U64(uint64_t v) { return Put(v); }
  RawFile& F32(float v) { return Put(v); }
  // A GGUF string: u64 length, then the bytes.
  RawFile& Str(std::string_view text);
  // Magic "GGUF", version, tensor count, kv count.
  RawFile& Header(uint32_t version, uint64_t num_tensors, uint64_t num_kvs);
  // A tensor info: name, n_dims, ne..., ggml type, offset.
  RawFile& TensorInfo(std::string_view name, const std::vector<uint64_t>& ne, uint32_t type,
                      uint64_t offset);
  RawFile& Zeros(size_t n);
  RawFile& PadTo(size_t alignment);

  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  template <typename T>
  RawFile& Put(T v) {
    const auto* raw = reinterpret_cast<const uint8_t*>(&v);
    bytes_.insert(bytes_.end(), raw, raw + sizeof(T));
    return *this;
  }
  std::vector<uint8_t> bytes_;
};

// Deterministic filler bytes for tensor data; `seed` makes tensors differ.
std::vector<uint8_t> PatternBytes(size_t n, uint8_t seed);

// One key per value type (u8 ... f64, bool, string, empty string), arrays of every element type,
// nested arrays (arrays of arrays of arrays), and tensors of f32, f16, q8_0 and q4_K.
Writer EveryValueTypeWriter();
// The keys EveryValueTypeWriter sets, with the values it sets, in order.
std::vector<std::pair<std::string, Value>> EveryValueTypeMetadata();

// "u8:200", "string:\"abc\"", "array<u8>[u8:1,u8:2]": equal values give equal text.
std::string Describe(const Value& value);

// $DS_SHARED_DIR/<relative>, DS_SHARED_DIR defaulting to "../shared" (from the repo root).
std::string SharedPath(std::string_view relative);
// The whole file, or nullopt when it cannot be read.
std::optional<std::vector<uint8_t>> ReadFileBytes(const std::string& path);

}  // namespace ds::gguf::testing
