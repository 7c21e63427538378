#include "tensor/dtype.h"

#include <array>
#include <cctype>
#include <string>

#include "base/check.h"

namespace ds::tensor {
namespace {

constexpr std::array<DTypeTraits, 20> kTable = {{
    {DType::kF32, "f32", 1, 4, true},
    {DType::kF16, "f16", 1, 2, true},
    {DType::kQ4_0, "q4_0", 32, 18, true},
    {DType::kQ4_1, "q4_1", 32, 20, true},
    {DType::kQ5_0, "q5_0", 32, 22, true},
    {DType::kQ5_1, "q5_1", 32, 24, true},
    {DType::kQ8_0, "q8_0", 32, 34, true},
    {DType::kQ8_1, "q8_1", 32, 36, false},
    {DType::kQ2_K, "q2_K", 256, 84, true},
    {DType::kQ3_K, "q3_K", 256, 110, true},
    {DType::kQ4_K, "q4_K", 256, 144, true},
    {DType::kQ5_K, "q5_K", 256, 176, true},
    {DType::kQ6_K, "q6_K", 256, 210, true},
    {DType::kQ8_K, "q8_K", 256, 292, false},
    {DType::kI8, "i8", 1, 1, false},
    {DType::kI16, "i16", 1, 2, false},
    {DType::kI32, "i32", 1, 4, false},
    {DType::kI64, "i64", 1, 8, false},
    {DType::kF64, "f64", 1, 8, false},
    {DType::kBF16, "bf16", 1, 2, true},
}};

}  // namespace

std::optional<DTypeTraits> FindDType(uint32_t raw_type) {
  for (const auto& t : kTable) {
    if (static_cast<uint32_t>(t.type) == raw_type) return t;
  }
  return std::nullopt;
}

const DTypeTraits& Traits(DType type) {
  for (const auto& t : kTable) {
    if (t.type == type) return t;
  }
  DS_CHECK_MSG(false, "undeclared dtype");
  return kTable[0];
}

std::string_view DTypeName(DType type) { return Traits(type).name; }

std::optional<DType> ParseDType(std::string_view name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& t : kTable) {
    std::string candidate;
    for (char c : t.name) candidate += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (candidate == lower) return t.type;
  }
  return std::nullopt;
}

int64_t RowBytes(DType type, int64_t n) {
  const DTypeTraits& t = Traits(type);
  DS_CHECK(n % t.block_elems == 0);
  return n / t.block_elems * t.block_bytes;
}

}  // namespace ds::tensor
