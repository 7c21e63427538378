#include "gguf/test_util.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>

namespace ds::gguf::testing {

RawFile& RawFile::Str(std::string_view text) {
  U64(text.size());
  bytes_.insert(bytes_.end(), text.begin(), text.end());
  return *this;
}

RawFile& RawFile::Header(uint32_t version, uint64_t num_tensors, uint64_t num_kvs) {
  bytes_.insert(bytes_.end(), {'G', 'G', 'U', 'F'});
  return U32(version).U64(num_tensors).U64(num_kvs);
}

RawFile& RawFile::TensorInfo(std::string_view name, const std::vector<uint64_t>& ne, uint32_t type,
                             uint64_t offset) {
  Str(name).U32(static_cast<uint32_t>(ne.size()));
  for (uint64_t d : ne) U64(d);
  return U32(type).U64(offset);
}

RawFile& RawFile::Zeros(size_t n) {
  bytes_.resize(bytes_.size() + n, 0);
  return *this;
}

RawFile& RawFile::PadTo(size_t alignment) {
  bytes_.resize((bytes_.size() + alignment - 1) / alignment * alignment, 0);
  return *this;
}

std::vector<uint8_t> PatternBytes(size_t n, uint8_t seed) {
  std::vector<uint8_t> bytes(n);
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(i * 131 + seed * 17 + 7);
  return bytes;
}

std::vector<std::pair<std::string, Value>> EveryValueTypeMetadata() {
  using VT = ValueType;
  Value nested =
      Value::Arr(VT::kArray, {Value::Arr(VT::kUint32, {Value::U32(1), Value::U32(2)}),
                              Value::Arr(VT::kString, {Value::Str("inner")}),
                              Value::Arr(VT::kArray, {Value::Arr(VT::kInt8, {Value::I8(-1)})}),
                              Value::Arr(VT::kFloat32, {})});
  return {
      {"t.u8", Value::U8(200)},
      {"t.i8", Value::I8(-100)},
      {"t.u16", Value::U16(60000)},
      {"t.i16", Value::I16(-30000)},
      {"t.u32", Value::U32(4000000000u)},
      {"t.i32", Value::I32(-2000000000)},
      {"t.u64", Value::U64(std::numeric_limits<uint64_t>::max())},
      {"t.i64", Value::I64(std::numeric_limits<int64_t>::min())},
      {"t.f32", Value::F32(-1.25e-3f)},
      {"t.f64", Value::F64(-1e300)},
      {"t.bool_true", Value::Bool(true)},
      {"t.bool_false", Value::Bool(false)},
      {"t.str", Value::Str("h\xc3\xa9llo\nworld")},
      {"t.str_empty", Value::Str("")},
      {"t.str_nul", Value::Str(std::string("a\0b", 3))},
      {"a.u8", Value::Arr(VT::kUint8, {Value::U8(0), Value::U8(255)})},
      {"a.i8", Value::Arr(VT::kInt8, {Value::I8(-128), Value::I8(127)})},
      {"a.u16", Value::Arr(VT::kUint16, {Value::U16(65535)})},
      {"a.i16", Value::Arr(VT::kInt16, {Value::I16(-32768), Value::I16(1)})},
      {"a.u32", Value::Arr(VT::kUint32, {Value::U32(7), Value::U32(8), Value::U32(9)})},
      {"a.i32", Value::Arr(VT::kInt32, {Value::I32(-7)})},
      {"a.u64", Value::Arr(VT::kUint64, {Value::U64(1ull << 40)})},
      {"a.i64", Value::Arr(VT::kInt64, {Value::I64(-(1ll << 40))})},
      {"a.f32", Value::Arr(VT::kFloat32, {Value::F32(0.5f), Value::F32(-2.0f)})},
      {"a.f64", Value::Arr(VT::kFloat64, {Value::F64(3.141592653589793)})},
      {"a.bool", Value::Arr(VT::kBool, {Value::Bool(true), Value::Bool(false)})},
      {"a.str", Value::Arr(VT::kString, {Value::Str("x"), Value::Str(""), Value::Str("yz")})},
      {"a.empty", Value::Arr(VT::kUint32, {})},
      {"a.nested", nested},
  };
}

Writer EveryValueTypeWriter() {
  Writer writer;
  for (auto& [key, value] : EveryValueTypeMetadata()) writer.Set(key, value);
  using tensor::DType;
  // [8, 3] f32 = 96 bytes; [16, 2] f16 = 64 bytes; [64, 3] q8_0 = 2*34*3 bytes;
  // [256, 2, 2] q4_K = 144*4 bytes; [5] f32 = 20 bytes, so the next tensor needs padding.
  writer.AddTensor("w.f32", {8, 3}, DType::kF32, PatternBytes(96, 1));
  writer.AddTensor("w.f32.odd", {5}, DType::kF32, PatternBytes(20, 2));
  writer.AddTensor("w.f16", {16, 2}, DType::kF16, PatternBytes(64, 3));
  writer.AddTensor("w.q8_0", {64, 3}, DType::kQ8_0, PatternBytes(2 * 34 * 3, 4));
  writer.AddTensor("w.q4_k", {256, 2, 2}, DType::kQ4_K, PatternBytes(144 * 4, 5));
  return writer;
}

// Built by appends: GCC 12 at -O3 warns (-Wrestrict) on chains of std::string operator+.
void AppendDescription(const Value& value, std::string* out) {
  out->append(ValueTypeName(value.type));
  if (const auto* array = std::get_if<Array>(&value.data)) {
    out->append(1, '<').append(ValueTypeName(array->element_type)).append(">[");
    for (size_t i = 0; i < array->items.size(); ++i) {
      if (i > 0) out->append(1, ',');
      AppendDescription(array->items[i], out);
    }
    out->append(1, ']');
    return;
  }
  out->append(1, ':');
  if (const auto* u = std::get_if<uint64_t>(&value.data)) {
    out->append(std::to_string(*u));
  } else if (const auto* i = std::get_if<int64_t>(&value.data)) {
    out->append(std::to_string(*i));
  } else if (const auto* d = std::get_if<double>(&value.data)) {
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), "%.17g", *d);
    out->append(buffer);
  } else if (const auto* b = std::get_if<bool>(&value.data)) {
    out->append(*b ? "true" : "false");
  } else {
    out->append(1, '"').append(std::get<std::string>(value.data)).append(1, '"');
  }
}

std::string Describe(const Value& value) {
  std::string text;
  AppendDescription(value, &text);
  return text;
}

std::string SharedPath(std::string_view relative) {
  const char* dir = std::getenv("DS_SHARED_DIR");
  return std::string(dir != nullptr ? dir : "../shared") + "/" + std::string(relative);
}

std::optional<std::vector<uint8_t>> ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

}  // namespace ds::gguf::testing
