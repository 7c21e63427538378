#include "api/json_fields.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace ds::api {
namespace {

Status TypeError(std::string_view parent, std::string_view key, std::string_view what) {
  return InvalidArgumentError(FieldPath(parent, key) + " must be " + std::string(what));
}

}  // namespace

std::string FieldPath(std::string_view parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  return std::string(parent) + "." + std::string(key);
}

std::string IndexPath(std::string_view parent, size_t index) {
  return std::string(parent) + "[" + std::to_string(index) + "]";
}

const Json* FindField(const Json& object, std::string_view key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

Status ReadString(const Json& object, std::string_view key, std::string_view parent,
                  std::string* out) {
  const Json* value = FindField(object, key);
  if (value == nullptr) return OkStatus();
  if (!value->is_string()) return TypeError(parent, key, "a string");
  *out = value->get<std::string>();
  return OkStatus();
}

Status RequireString(const Json& object, std::string_view key, std::string_view parent,
                     std::string* out) {
  if (FindField(object, key) == nullptr) {
    return InvalidArgumentError(FieldPath(parent, key) + " is required");
  }
  return ReadString(object, key, parent, out);
}

Status ReadBool(const Json& object, std::string_view key, std::string_view parent, bool* out) {
  const Json* value = FindField(object, key);
  if (value == nullptr) return OkStatus();
  if (!value->is_boolean()) return TypeError(parent, key, "a boolean");
  *out = value->get<bool>();
  return OkStatus();
}

Status ReadInt(const Json& object, std::string_view key, std::string_view parent, int64_t min,
               int64_t max, int64_t* out) {
  const Json* value = FindField(object, key);
  if (value == nullptr) return OkStatus();
  int64_t v = 0;
  if (value->is_number_integer()) {
    if (value->is_number_unsigned() &&
        value->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      v = std::numeric_limits<int64_t>::max();
    } else {
      v = value->get<int64_t>();
    }
  } else if (value->is_number_float()) {
    // JavaScript clients cannot tell 8192 from 8192.0; only a fractional part is an error.
    double d = value->get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9.0e18) {
      return TypeError(parent, key, "an integer");
    }
    v = static_cast<int64_t>(d);
  } else {
    return TypeError(parent, key, "an integer");
  }
  if (v < min || v > max) {
    std::string range = max == std::numeric_limits<int64_t>::max()
                            ? ">= " + std::to_string(min)
                            : "between " + std::to_string(min) + " and " + std::to_string(max);
    return TypeError(parent, key, range);
  }
  *out = v;
  return OkStatus();
}

Status ReadFloat(const Json& object, std::string_view key, std::string_view parent, double min,
                 double max, float* out) {
  const Json* value = FindField(object, key);
  if (value == nullptr) return OkStatus();
  if (!value->is_number()) return TypeError(parent, key, "a number");
  double v = value->get<double>();
  if (!(v >= min && v <= max)) {
    char range[96];
    std::snprintf(range, sizeof(range), "between %g and %g", min, max);
    return TypeError(parent, key, range);
  }
  *out = static_cast<float>(v);
  return OkStatus();
}

StatusOr<const Json*> FindObject(const Json& object, std::string_view key,
                                 std::string_view parent) {
  const Json* value = FindField(object, key);
  if (value != nullptr && !value->is_object()) return TypeError(parent, key, "an object");
  return value;
}

StatusOr<const Json*> FindArray(const Json& object, std::string_view key, std::string_view parent) {
  const Json* value = FindField(object, key);
  if (value != nullptr && !value->is_array()) return TypeError(parent, key, "an array");
  return value;
}

}  // namespace ds::api
