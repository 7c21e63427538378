#include "apps/model_fingerprint.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>

namespace ds::apps {
namespace {

constexpr size_t kSampleBytes = 4096;

}  // namespace

uint64_t ModelFingerprint(const gguf::File& file) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  XXH3_64bits_update(state, kNumericsVersion, std::strlen(kNumericsVersion));
  std::span<const uint8_t> bytes = file.bytes();
  const size_t head = std::min<size_t>(file.data_offset(), bytes.size());
  XXH3_64bits_update(state, bytes.data(), head);
  for (const gguf::TensorInfo& tensor : file.tensors()) {
    const size_t size = tensor.size_bytes;
    const size_t sample = std::min(size, kSampleBytes);
    for (size_t at : {size_t{0}, (size - sample) / 2, size - sample}) {
      XXH3_64bits_update(state, tensor.data + at, sample);
    }
  }
  uint64_t hash = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return hash;
}

}  // namespace ds::apps
