// The --kv-quant and --v-quant flags of run, serve and bench-model: how attention K and V rows
// are stored. --kv-quant 0 keeps both f32; 8 stores GGUF Q8_0 blocks (32 values and an fp16
// scale, 3.6x smaller), which makes long-context decode read far less memory. --v-quant sets V
// apart: 4 stores Q4_0 blocks (32 4-bit codes and an fp16 scale, 7.1x smaller than f32). K stays
// at 8 bits at most because a score's error goes through exp() into every weight, where V's
// errors are averaged by the weights. The cache tiers store the rows as they are.
#pragma once

#include "base/status.h"
#include "model/hparams.h"
#include "tensor/dtype.h"

namespace ds::apps {

inline constexpr const char* kKvQuantHelp =
    "attention K/V storage: 0 = f32, 8 = 8-bit blocks (Q8_0, needs a head size divisible by 32)";
inline constexpr const char* kValueQuantHelp =
    "attention V storage apart from K: 0 = f32, 8 = 8-bit blocks (Q8_0), 4 = 4-bit blocks (Q4_0); "
    "quantised V needs a head size divisible by 32 (default: as --kv-quant)";
// --v-quant's value when not given: V as K.
inline constexpr int kValueBitsAsKeys = -1;

struct KvDtypes {
  tensor::DType key = tensor::DType::kF32;
  tensor::DType value = tensor::DType::kF32;
};

// The row dtypes for --kv-quant `kv_bits` and --v-quant `v_bits` (kValueBitsAsKeys: as K);
// InvalidArgument for other values or a model whose head size the blocks cannot divide.
StatusOr<KvDtypes> KvDtypesFor(int kv_bits, int v_bits, const model::HParams& hp);

}  // namespace ds::apps
