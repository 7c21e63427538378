#include "gguf/value_parser.h"

#include <string>
#include <utility>

namespace ds::gguf {

std::string_view ValueTypeName(ValueType type) {
  switch (type) {
    case ValueType::kUint8:
      return "u8";
    case ValueType::kInt8:
      return "i8";
    case ValueType::kUint16:
      return "u16";
    case ValueType::kInt16:
      return "i16";
    case ValueType::kUint32:
      return "u32";
    case ValueType::kInt32:
      return "i32";
    case ValueType::kFloat32:
      return "f32";
    case ValueType::kBool:
      return "bool";
    case ValueType::kString:
      return "string";
    case ValueType::kArray:
      return "array";
    case ValueType::kUint64:
      return "u64";
    case ValueType::kInt64:
      return "i64";
    case ValueType::kFloat64:
      return "f64";
  }
  return "unknown";
}

namespace internal {
namespace {

// Fewest bytes one value of `type` occupies in a file: a count of such values is checked
// against the bytes left before the vector holding them is reserved.
uint64_t MinEncodedBytes(ValueType type) {
  switch (type) {
    case ValueType::kUint8:
    case ValueType::kInt8:
    case ValueType::kBool:
      return 1;
    case ValueType::kUint16:
    case ValueType::kInt16:
      return 2;
    case ValueType::kUint32:
    case ValueType::kInt32:
    case ValueType::kFloat32:
      return 4;
    case ValueType::kUint64:
    case ValueType::kInt64:
    case ValueType::kFloat64:
    case ValueType::kString:  // the u64 length of an empty string
      return 8;
    case ValueType::kArray:  // u32 element type + u64 count of an empty array
      return 12;
  }
  return 1;
}

// `Raw` is the width stored in the file, `Held` the Value alternative that keeps it.
template <typename Raw, typename Held>
Status ReadScalar(Cursor& cursor, ValueType type, Value* out) {
  Raw raw{};
  DS_RETURN_IF_ERROR(cursor.Read(&raw, ValueTypeName(type)));
  out->type = type;
  out->data = static_cast<Held>(raw);
  return OkStatus();
}

Status ReadBool(Cursor& cursor, Value* out) {
  const uint64_t offset = cursor.offset();
  uint8_t raw = 0;
  DS_RETURN_IF_ERROR(cursor.Read(&raw, "bool value"));
  if (raw > 1) {
    return InvalidArgumentError("bool value " + std::to_string(raw) + " at offset " +
                                std::to_string(offset) + " is neither 0 nor 1");
  }
  out->type = ValueType::kBool;
  out->data = raw == 1;
  return OkStatus();
}

Status ReadArray(Cursor& cursor, int depth, uint64_t* values_left, Value* out) {
  if (depth >= kMaxArrayDepth) {
    return InvalidArgumentError("arrays nested more than " + std::to_string(kMaxArrayDepth) +
                                " deep");
  }
  uint32_t raw_type = 0;
  DS_RETURN_IF_ERROR(cursor.Read(&raw_type, "array element type"));
  const std::optional<ValueType> element_type = ToValueType(raw_type);
  if (!element_type) {
    return InvalidArgumentError("unknown array element type " + std::to_string(raw_type));
  }
  const uint64_t count_offset = cursor.offset();
  uint64_t count = 0;
  DS_RETURN_IF_ERROR(cursor.Read(&count, "array count"));
  if (count > cursor.remaining() / MinEncodedBytes(*element_type)) {
    return InvalidArgumentError("array count " + std::to_string(count) + " of " +
                                std::string(ValueTypeName(*element_type)) + " at offset " +
                                std::to_string(count_offset) + " cannot fit in the " +
                                std::to_string(cursor.remaining()) + " bytes left in the file");
  }
  if (count > *values_left) {
    return InvalidArgumentError("array count " + std::to_string(count) + " at offset " +
                                std::to_string(count_offset) + " exceeds the limit of " +
                                std::to_string(kMaxMetadataValues) + " metadata values per file");
  }
  *values_left -= count;
  Array array{*element_type, {}};
  array.items.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    Value item;
    Status status = ReadValue(cursor, *element_type, depth + 1, values_left, &item);
    if (!status.ok()) return Annotate(status, "array element " + std::to_string(i));
    array.items.push_back(std::move(item));
  }
  out->type = ValueType::kArray;
  out->data = std::move(array);
  return OkStatus();
}

}  // namespace

std::optional<ValueType> ToValueType(uint32_t raw) {
  if (raw > static_cast<uint32_t>(ValueType::kFloat64)) return std::nullopt;
  return static_cast<ValueType>(raw);
}

Status ReadValue(Cursor& cursor, ValueType type, int depth, uint64_t* values_left, Value* out) {
  switch (type) {
    case ValueType::kUint8:
      return ReadScalar<uint8_t, uint64_t>(cursor, type, out);
    case ValueType::kInt8:
      return ReadScalar<int8_t, int64_t>(cursor, type, out);
    case ValueType::kUint16:
      return ReadScalar<uint16_t, uint64_t>(cursor, type, out);
    case ValueType::kInt16:
      return ReadScalar<int16_t, int64_t>(cursor, type, out);
    case ValueType::kUint32:
      return ReadScalar<uint32_t, uint64_t>(cursor, type, out);
    case ValueType::kInt32:
      return ReadScalar<int32_t, int64_t>(cursor, type, out);
    case ValueType::kUint64:
      return ReadScalar<uint64_t, uint64_t>(cursor, type, out);
    case ValueType::kInt64:
      return ReadScalar<int64_t, int64_t>(cursor, type, out);
    case ValueType::kFloat32:
      return ReadScalar<float, double>(cursor, type, out);
    case ValueType::kFloat64:
      return ReadScalar<double, double>(cursor, type, out);
    case ValueType::kBool:
      return ReadBool(cursor, out);
    case ValueType::kString: {
      std::string text;
      DS_RETURN_IF_ERROR(cursor.ReadString(&text, "string"));
      out->type = type;
      out->data = std::move(text);
      return OkStatus();
    }
    case ValueType::kArray:
      return ReadArray(cursor, depth, values_left, out);
  }
  return InvalidArgumentError("unknown value type " + std::to_string(static_cast<uint32_t>(type)));
}

}  // namespace internal
}  // namespace ds::gguf
