// Factories of the architecture implementations, one per file; only model_registry.cc calls them.
#pragma once

#include <memory>

#include "model/model.h"

namespace ds::model {

// llama, qwen2 (q/k/v biases) and qwen3 (q/k norms).
StatusOr<std::unique_ptr<Model>> LoadDenseTransformer(gguf::File& file, HParams hp);

// qwen35 (dense FFN), qwen35moe and qwen3next: Gated DeltaNet layers mixed with gated attention.
StatusOr<std::unique_ptr<Model>> LoadQwenHybrid(gguf::File& file, HParams hp);

}  // namespace ds::model
