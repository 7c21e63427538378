// Typed reads of request fields with errors that name the field as the client wrote it, e.g.
// "messages[2].content must be a string". A field that is absent or JSON null counts as unset.
// Thread safety: stateless functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "api/types.h"
#include "base/status.h"

namespace ds::api {

// "parent.key", or "key" at the top level.
std::string FieldPath(std::string_view parent, std::string_view key);
// "parent[index]".
std::string IndexPath(std::string_view parent, size_t index);

// The value of `key` in `object`, or nullptr when absent or null. REQUIRES: object is an object.
const Json* FindField(const Json& object, std::string_view key);

// Each Read* leaves *out unchanged when the field is unset.
Status ReadString(const Json& object, std::string_view key, std::string_view parent,
                  std::string* out);
Status ReadBool(const Json& object, std::string_view key, std::string_view parent, bool* out);
// Integers; a number with a fractional part is an error. Bounds are inclusive.
Status ReadInt(const Json& object, std::string_view key, std::string_view parent, int64_t min,
               int64_t max, int64_t* out);
Status ReadFloat(const Json& object, std::string_view key, std::string_view parent, double min,
                 double max, float* out);

// Like ReadString, but an unset field is "<path> is required".
Status RequireString(const Json& object, std::string_view key, std::string_view parent,
                     std::string* out);

// The field as an object or array, or nullptr when unset; the wrong type is an error.
StatusOr<const Json*> FindObject(const Json& object, std::string_view key, std::string_view parent);
StatusOr<const Json*> FindArray(const Json& object, std::string_view key, std::string_view parent);

}  // namespace ds::api
