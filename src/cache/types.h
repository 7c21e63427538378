// Vocabulary of the prefix cache: payload handles, chain hashes, record kinds, the reasons the
// cache reports, and its options. Values only; no thread-safety concerns.
//
// The cache never sees tensors or bytes. Every record (a KV block or a snapshot) is metadata plus
// a PayloadId and a declared size; the engine keeps the bytes in its own store keyed by that id.
#pragma once

#include <cstdint>
#include <span>

namespace ds::cache {

// Handle of one immutable payload. Assigned by the cache, never reused, never 0.
using PayloadId = uint64_t;

// Token id stored where no token exists (e.g. no cached token at a divergence).
inline constexpr int32_t kNoToken = -1;
// Cached ids a lookup reports from its divergence point on, to show both sides of a miss.
inline constexpr int64_t kDivergenceWindowTokens = 16;

struct Hash128 {
  uint64_t low = 0;
  uint64_t high = 0;
  bool operator==(const Hash128&) const = default;
};

struct Hash128Hasher {
  size_t operator()(const Hash128& h) const { return static_cast<size_t>(h.low ^ h.high); }
};

// Chain hash step: H_i = f(H_{i-1}, ids of block i, seed). Must be deterministic across runs so
// keys survive restarts (a disk tier stores them). Tests pass a weak one to force collisions;
// the cache compares token ids anyway and never trusts a hash alone.
using ChainHashFn = Hash128 (*)(const Hash128& parent, std::span<const int32_t> ids, uint64_t seed);

// Why a snapshot was taken; weighs its value in eviction (see eviction.h).
enum class SnapshotKind : uint8_t {
  kMessageBoundary,  // end of system+tools, start of a user/tool message or assistant turn
  kPromptEnd,        // the whole prompt processed, before the first sampled token
  kGenerationEnd,    // prompt + generated ids processed (the last sampled id is not yet fed)
  kInterval,         // a sparse point inside a very long segment
  kInterrupted,      // the client went away mid-request
};
inline constexpr int kNumSnapshotKinds = 5;
const char* SnapshotKindName(SnapshotKind kind);

// Why a record left the cache. Eviction classes are tried in this order (eviction.h).
enum class EvictReason : uint8_t {
  kUselessKv,  // hybrid: a KV block with no snapshot at or past its end; it can never be resumed
  kLowValue,   // cheapest by value among unprotected records
  kProtected,  // a conversation tail or shared-prefix snapshot, evicted only under pressure
};
inline constexpr int kNumEvictReasons = 3;
const char* EvictReasonName(EvictReason reason);

// Why a lookup resumes where it does (Match::limit).
enum class ResumeLimit : uint8_t {
  kNothingCached,  // no cached record shares even the first token
  kReachedMatch,   // resumes at min(longest match, tokens - 1): nothing better was possible
  kNoSnapshot,     // hybrid: matched tokens past the resume point carry no snapshot
  kSnapshotAtEnd,  // the deeper snapshot sits at tokens.size(); one token must be computed
  kEvicted,        // a deeper record of this prefix was evicted (remembered for diagnostics)
  kRestoreGuard,   // a deeper resume point needs more than LookupOptions::max_restore_bytes
};
inline constexpr int kNumResumeLimits = 6;
const char* ResumeLimitName(ResumeLimit limit);

// How records are valued within an eviction class.
enum class EvictionPolicy : uint8_t {
  kValue,    // GDSF: recency, hits and tokens saved per byte (eviction.h)
  kRecency,  // least recently used first
};

struct CacheOptions {
  // Tokens per KV block; keys and resume points of dense models are per block.
  int64_t block_tokens = 256;
  // Bytes of all payloads together; never exceeded after an Insert returns.
  int64_t budget_bytes = int64_t{8} << 30;
  // True for hybrid models: resuming needs a snapshot of the recurrent state at exactly the resume
  // position. False for dense models: any cached KV prefix is resumable and snapshot inserts only
  // add "tail" records (KV rows of a partial block).
  bool has_recurrent_state = true;
  // Model fingerprint (weights, tokenizer, template, numerics) folded into every key.
  uint64_t model_seed = 0;
  // Evicted records remembered (key only) to explain misses with ResumeLimit::kEvicted.
  int64_t max_ghosts = 4096;
  // Null means xxh3-128 (chain_hash.h).
  ChainHashFn chain_hash = nullptr;
  EvictionPolicy eviction = EvictionPolicy::kValue;
};

}  // namespace ds::cache
