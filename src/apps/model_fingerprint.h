// The model fingerprint that keys the disk cache: a record made by one model (weights,
// tokenizer, chat template) or one version of the numerics is never restored by another.
// Thread safety: a pure function.
#pragma once

#include <cstdint>

#include "gguf/gguf.h"

namespace ds::apps {

// Bumped whenever a change to kernels or state layout would make cached state differ from what
// this build computes.
inline constexpr const char* kNumericsVersion = "deltaserve-numerics-1 f32-kv f32-recurrent";

// xxh3-64 of the numerics version, everything before the tensor data (header, metadata with the
// tokenizer and chat template, tensor infos) and samples of every tensor's bytes (start, middle,
// end), so a fine-tune with the same shapes gets another fingerprint without hashing every
// weight at start-up.
uint64_t ModelFingerprint(const gguf::File& file);

}  // namespace ds::apps
