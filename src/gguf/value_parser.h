// Parsing of GGUF metadata values from untrusted bytes (internal to the reader).
// Every count is checked against the bytes left before anything is reserved, and array nesting
// is bounded, so a hostile file costs at most memory proportional to its size and a fixed stack.
// Thread safety: stateless functions.
#pragma once

#include <cstdint>
#include <optional>

#include "base/status.h"
#include "gguf/cursor.h"
#include "gguf/gguf.h"

namespace ds::gguf::internal {

// Arrays may hold arrays; nesting deeper than this is rejected so that recursion stays bounded.
// Files written by llama.cpp never nest at all.
inline constexpr int kMaxArrayDepth = 8;

// The value type numbered `raw` in the file, or nullopt when GGUF defines no such type.
std::optional<ValueType> ToValueType(uint32_t raw);

// Reads one value of `type` at the cursor into `out`. `depth` counts the enclosing arrays;
// `values_left` is the file's remaining budget of array elements (see kMaxMetadataValues), which
// each array's count is charged against before its elements are reserved.
Status ReadValue(Cursor& cursor, ValueType type, int depth, uint64_t* values_left, Value* out);

}  // namespace ds::gguf::internal
