#include "apps/kv_quant.h"

#include <string>

#include "tensor/blocks.h"

namespace ds::apps {
namespace {

Status CheckWholeBlocks(const char* flag, int bits, const model::HParams& hp) {
  if (bits == 0 || hp.head_dim % tensor::kQK == 0) return OkStatus();
  return InvalidArgumentError(std::string(flag) + " " + std::to_string(bits) +
                              " needs a head size divisible by 32; this model's is " +
                              std::to_string(hp.head_dim));
}

}  // namespace

StatusOr<KvDtypes> KvDtypesFor(int kv_bits, int v_bits, const model::HParams& hp) {
  if (kv_bits != 0 && kv_bits != 8) {
    return InvalidArgumentError("--kv-quant takes 0 (f32) or 8 (Q8_0), not " +
                                std::to_string(kv_bits));
  }
  if (v_bits == kValueBitsAsKeys) v_bits = kv_bits;
  if (v_bits != 0 && v_bits != 8 && v_bits != 4) {
    return InvalidArgumentError("--v-quant takes 0 (f32), 8 (Q8_0) or 4 (Q4_0), not " +
                                std::to_string(v_bits));
  }
  DS_RETURN_IF_ERROR(CheckWholeBlocks("--kv-quant", kv_bits, hp));
  DS_RETURN_IF_ERROR(CheckWholeBlocks("--v-quant", v_bits, hp));
  const auto dtype_of = [](int bits) {
    if (bits == 0) return tensor::DType::kF32;
    return bits == 8 ? tensor::DType::kQ8_0 : tensor::DType::kQ4_0;
  };
  return KvDtypes{dtype_of(kv_bits), dtype_of(v_bits)};
}

}  // namespace ds::apps
