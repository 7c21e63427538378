// Test helpers for the cache: a fake engine payload store that records what each payload would
// hold, so a test can check that a Match rebuilds exactly the state of the looked-up prefix.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "cache/prefix_cache.h"

namespace ds::cache::testing {

// What the engine would have written under one PayloadId: for a block, the KV of its tokens; for
// a snapshot, the KV of its tail plus a recurrent state that depends on the whole prefix.
struct FakePayload {
  bool is_snapshot = false;
  std::vector<int32_t> prefix;  // tokens [0, end): KV rows (and recurrent state) derive from these
  int64_t begin_tokens = 0;     // first KV row stored
  int64_t bytes = 0;
};

class FakeStore {
 public:
  FakeStore() = default;
  // Frees payloads when `cache` evicts them.
  explicit FakeStore(PrefixCache* cache) {
    cache->SetEvictionListener([this](const EvictedRecord& record) { OnEvict(record); });
  }

  void OnEvict(const EvictedRecord& record) {
    auto it = payloads_.find(record.payload);
    ASSERT_NE(it, payloads_.end()) << "evicted an unknown payload " << record.payload;
    EXPECT_EQ(it->second.bytes, record.bytes);
    EXPECT_EQ(it->second.is_snapshot, record.is_snapshot);
    EXPECT_EQ(record.end_tokens, static_cast<int64_t>(it->second.prefix.size()));
    EXPECT_TRUE(std::equal(record.ids.begin(), record.ids.end(),
                           it->second.prefix.begin() + record.begin_tokens,
                           it->second.prefix.end()));
    evicted_.push_back(record.payload);
    by_prefix_.erase(Key{it->second.prefix, it->second.is_snapshot});
    payloads_.erase(it);
  }

  void Store(std::span<const int32_t> tokens, const InsertResult& result, int64_t block_tokens,
             int64_t block_bytes, int64_t snapshot_bytes) {
    for (const NewBlock& block : result.new_blocks) {
      const int64_t end = (block.index + 1) * block_tokens;
      Add(block.payload,
          FakePayload{
              false, {tokens.begin(), tokens.begin() + end}, end - block_tokens, block_bytes});
    }
    if (result.new_snapshot != 0) {
      const auto end = static_cast<int64_t>(tokens.size());
      Add(result.new_snapshot, FakePayload{true,
                                           {tokens.begin(), tokens.end()},
                                           end / block_tokens * block_tokens,
                                           snapshot_bytes});
    }
  }

  // The payload standing for exactly `prefix`, of the given kind.
  std::optional<PayloadId> Find(std::span<const int32_t> prefix, bool is_snapshot) const {
    auto it = by_prefix_.find(Key{{prefix.begin(), prefix.end()}, is_snapshot});
    if (it == by_prefix_.end()) return std::nullopt;
    return it->second;
  }

  // True when some payload's prefix starts with `prefix`.
  bool AnyStartsWith(std::span<const int32_t> prefix) const {
    auto it = by_prefix_.lower_bound(Key{{prefix.begin(), prefix.end()}, false});
    return it != by_prefix_.end() && it->first.first.size() >= prefix.size() &&
           std::equal(prefix.begin(), prefix.end(), it->first.first.begin());
  }

  const std::map<PayloadId, FakePayload>& payloads() const { return payloads_; }
  const std::vector<PayloadId>& evicted() const { return evicted_; }
  int64_t total_bytes() const {
    int64_t total = 0;
    for (const auto& [id, payload] : payloads_) total += payload.bytes;
    return total;
  }

 private:
  using Key = std::pair<std::vector<int32_t>, bool>;  // prefix, is_snapshot

  void Add(PayloadId id, FakePayload payload) {
    ASSERT_TRUE(by_prefix_.emplace(Key{payload.prefix, payload.is_snapshot}, id).second)
        << "two payloads for one prefix";
    payloads_[id] = std::move(payload);
  }

  std::map<PayloadId, FakePayload> payloads_;
  std::map<Key, PayloadId> by_prefix_;
  std::vector<PayloadId> evicted_;
};

inline bool IsPrefixOf(std::span<const int32_t> prefix, std::span<const int32_t> tokens) {
  return prefix.size() <= tokens.size() && std::equal(prefix.begin(), prefix.end(), tokens.begin());
}

// Fails the test unless restoring `match` yields exactly the state after tokens[0, resume).
inline void ExpectRestoresPrefix(const Match& match, std::span<const int32_t> tokens,
                                 const FakeStore& store, int64_t block_tokens, bool hybrid) {
  const int64_t r = match.resume_tokens;
  ASSERT_LE(r, std::max<int64_t>(static_cast<int64_t>(tokens.size()) - 1, 0));
  for (size_t j = 0; j < match.blocks.size(); ++j) {
    auto it = store.payloads().find(match.blocks[j].payload);
    ASSERT_NE(it, store.payloads().end()) << "block payload missing";
    ASSERT_FALSE(it->second.is_snapshot);
    ASSERT_EQ(it->second.begin_tokens, static_cast<int64_t>(j) * block_tokens);
    ASSERT_TRUE(IsPrefixOf(it->second.prefix, tokens)) << "block " << j << " holds other ids";
  }
  const int64_t blocks_end = static_cast<int64_t>(match.blocks.size()) * block_tokens;
  if (!match.tail) {
    ASSERT_EQ(r, blocks_end);
    ASSERT_TRUE(!hybrid || r == 0) << "a hybrid resume needs a snapshot";
    return;
  }
  auto it = store.payloads().find(match.tail->payload);
  ASSERT_NE(it, store.payloads().end()) << "tail payload missing";
  const FakePayload& tail = it->second;
  ASSERT_EQ(tail.begin_tokens, blocks_end);
  ASSERT_EQ(match.tail->begin_tokens, blocks_end);
  ASSERT_EQ(blocks_end + match.tail->num_rows, r);
  ASSERT_EQ(tail.is_snapshot, match.tail->is_snapshot);
  ASSERT_EQ(static_cast<int64_t>(tail.prefix.size()) - blocks_end, match.tail->record_rows);
  // The KV rows used must come from the same tokens.
  ASSERT_TRUE(IsPrefixOf(std::span(tail.prefix).first(r), tokens));
  if (hybrid) {
    // The recurrent state is that of the record's whole prefix: it must be exactly [0, r).
    ASSERT_TRUE(tail.is_snapshot);
    ASSERT_EQ(static_cast<int64_t>(tail.prefix.size()), r);
  }
}

}  // namespace ds::cache::testing
