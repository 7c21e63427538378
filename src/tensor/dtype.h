// Element types of weights and activations, numbered as GGUF stores them (ggml_type), with their
// block layouts. A row of n elements of a block type occupies n / block_elems * block_bytes bytes.
// Thread safety: constants only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ds::tensor {

enum class DType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kI8 = 24,
  kI16 = 25,
  kI32 = 26,
  kI64 = 27,
  kF64 = 28,
  kBF16 = 30,
};

struct DTypeTraits {
  DType type;
  std::string_view name;  // as llama.cpp prints it: "f32", "q4_K", ...
  int64_t block_elems;    // elements per block (1 for plain types)
  int64_t block_bytes;    // bytes per block
  bool is_weight_type;    // supported as a model weight by the kernels
};

// Traits of a type GGUF knows, or nullopt for a number outside the table (an untrusted file).
std::optional<DTypeTraits> FindDType(uint32_t raw_type);
// REQUIRES: `type` is a declared enumerator.
const DTypeTraits& Traits(DType type);
std::string_view DTypeName(DType type);
// Parses "q8_0", "Q4_K", "bf16", ... (case-insensitive).
std::optional<DType> ParseDType(std::string_view name);

// Bytes of a row of n elements. REQUIRES: n % block_elems == 0.
int64_t RowBytes(DType type, int64_t n);

}  // namespace ds::tensor
