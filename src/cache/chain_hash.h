// Chained block keys: H_0 = RootKey(seed), H_i = hash(H_{i-1}, ids of block i). A key names a
// whole prefix, so equal keys mean equal prefixes unless the hash collides; callers compare the
// token ids before trusting one. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>

#include "cache/types.h"

namespace ds::cache {

// xxh3-128 over the 16 bytes of `parent` (little-endian) followed by the ids as int32
// little-endian, seeded with `seed`. Stable across runs and builds on little-endian machines.
Hash128 Xxh3ChainHash(const Hash128& parent, std::span<const int32_t> ids, uint64_t seed);

// xxh3-64 of the ids alone: a cheap fingerprint for diagnostics, never used as a key.
uint64_t IdsFingerprint(std::span<const int32_t> ids);

}  // namespace ds::cache
