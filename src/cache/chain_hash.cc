#include "cache/chain_hash.h"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

namespace ds::cache {

Hash128 Xxh3ChainHash(const Hash128& parent, std::span<const int32_t> ids, uint64_t seed) {
  XXH3_state_t state;
  XXH3_INITSTATE(&state);
  XXH3_128bits_reset_withSeed(&state, seed);
  const uint64_t parent_words[2] = {parent.low, parent.high};
  XXH3_128bits_update(&state, parent_words, sizeof(parent_words));
  XXH3_128bits_update(&state, ids.data(), ids.size_bytes());
  const XXH128_hash_t digest = XXH3_128bits_digest(&state);
  return Hash128{digest.low64, digest.high64};
}

uint64_t IdsFingerprint(std::span<const int32_t> ids) {
  return XXH3_64bits(ids.data(), ids.size_bytes());
}

}  // namespace ds::cache
