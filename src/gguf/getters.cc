// Typed metadata getters of gguf::File. Errors name the file, the key, the expected and the stored
// type, so a model loader can return them to the user as they are.
#include <cstdint>
#include <string>

#include "gguf/gguf.h"

namespace ds::gguf {
namespace {

bool IsUnsignedInteger(ValueType type) {
  return type == ValueType::kUint8 || type == ValueType::kUint16 || type == ValueType::kUint32 ||
         type == ValueType::kUint64;
}

bool IsSignedInteger(ValueType type) {
  return type == ValueType::kInt8 || type == ValueType::kInt16 || type == ValueType::kInt32 ||
         type == ValueType::kInt64;
}

std::string KeyContext(const File& file, std::string_view key) {
  return file.display_name() + ": key '" + std::string(key) + "'";
}

StatusOr<const Value*> Lookup(const File& file, std::string_view key) {
  const Value* value = file.Find(key);
  if (value == nullptr) return NotFoundError(KeyContext(file, key) + " not found");
  return value;
}

Status WrongType(const File& file, std::string_view key, const Value& value,
                 std::string_view expected) {
  return InvalidArgumentError(KeyContext(file, key) + " has type " +
                              std::string(ValueTypeName(value.type)) + ", expected " +
                              std::string(expected));
}

}  // namespace

StatusOr<std::string> File::GetString(std::string_view key) const {
  DS_ASSIGN_OR_RETURN(const Value* value, Lookup(*this, key));
  if (value->type != ValueType::kString) return WrongType(*this, key, *value, "string");
  return std::get<std::string>(value->data);
}

StatusOr<uint64_t> File::GetUint(std::string_view key) const {
  DS_ASSIGN_OR_RETURN(const Value* value, Lookup(*this, key));
  if (IsUnsignedInteger(value->type)) return std::get<uint64_t>(value->data);
  if (!IsSignedInteger(value->type)) return WrongType(*this, key, *value, "an unsigned integer");
  const int64_t signed_value = std::get<int64_t>(value->data);
  if (signed_value < 0) {
    return InvalidArgumentError(KeyContext(*this, key) + " is " + std::to_string(signed_value) +
                                ", expected an unsigned integer");
  }
  return static_cast<uint64_t>(signed_value);
}

StatusOr<int64_t> File::GetInt(std::string_view key) const {
  DS_ASSIGN_OR_RETURN(const Value* value, Lookup(*this, key));
  if (IsSignedInteger(value->type)) return std::get<int64_t>(value->data);
  if (!IsUnsignedInteger(value->type)) return WrongType(*this, key, *value, "an integer");
  const uint64_t unsigned_value = std::get<uint64_t>(value->data);
  if (unsigned_value > static_cast<uint64_t>(INT64_MAX)) {
    return InvalidArgumentError(KeyContext(*this, key) + " is " + std::to_string(unsigned_value) +
                                ", which does not fit in i64");
  }
  return static_cast<int64_t>(unsigned_value);
}

StatusOr<double> File::GetFloat(std::string_view key) const {
  DS_ASSIGN_OR_RETURN(const Value* value, Lookup(*this, key));
  if (value->type != ValueType::kFloat32 && value->type != ValueType::kFloat64) {
    return WrongType(*this, key, *value, "f32 or f64");
  }
  return std::get<double>(value->data);
}

StatusOr<bool> File::GetBool(std::string_view key) const {
  DS_ASSIGN_OR_RETURN(const Value* value, Lookup(*this, key));
  if (value->type != ValueType::kBool) return WrongType(*this, key, *value, "bool");
  return std::get<bool>(value->data);
}

StatusOr<const Array*> File::GetArray(std::string_view key) const {
  DS_ASSIGN_OR_RETURN(const Value* value, Lookup(*this, key));
  if (value->type != ValueType::kArray) return WrongType(*this, key, *value, "array");
  return &std::get<Array>(value->data);
}

}  // namespace ds::gguf
