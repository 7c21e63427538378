#include "apps/kv_quant.h"

#include <string>

#include "tensor/blocks.h"

namespace ds::apps {

StatusOr<tensor::DType> KvDtypeFor(int bits, const model::HParams& hp) {
  if (bits == 0) return tensor::DType::kF32;
  if (bits != 8) {
    return InvalidArgumentError("--kv-quant takes 0 (f32) or 8 (Q8_0), not " +
                                std::to_string(bits));
  }
  if (hp.head_dim % tensor::kQK != 0) {
    return InvalidArgumentError("--kv-quant 8 needs a head size divisible by 32; this model's is " +
                                std::to_string(hp.head_dim));
  }
  return tensor::DType::kQ8_0;
}

}  // namespace ds::apps
