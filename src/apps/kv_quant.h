// The --kv-quant flag of run, serve and bench-model: how attention K and V rows are stored.
// 0 keeps f32; 8 stores GGUF Q8_0 blocks (32 values and an fp16 scale, 3.6x smaller), which
// makes long-context decode read far less memory. The cache tiers store the rows as they are.
#pragma once

#include "base/status.h"
#include "model/hparams.h"
#include "tensor/dtype.h"

namespace ds::apps {

inline constexpr const char* kKvQuantHelp =
    "attention K/V storage: 0 = f32, 8 = 8-bit blocks (Q8_0, needs a head size divisible by 32)";

// The row dtype for `bits`; InvalidArgument for other values or a model whose head size Q8_0
// blocks cannot divide.
StatusOr<tensor::DType> KvDtypeFor(int bits, const model::HParams& hp);

}  // namespace ds::apps
