// Memory of evicted records, kept only to explain misses (ResumeLimit::kEvicted). A ghost names
// the node a record hung off, where the record ended and a fingerprint of its ids; it holds no
// payload and is never used to resume. Bounded: the oldest ghost is forgotten first.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <unordered_map>
#include <vector>

#include "cache/types.h"

namespace ds::cache {

class Ghosts {
 public:
  // REQUIRES: capacity >= 0 (0 remembers nothing).
  explicit Ghosts(int64_t capacity);

  // Remembers a record that covered tokens [end_tokens - ids.size(), end_tokens) and hung off the
  // block node whose key is `node_key` (for a block: its parent).
  void Add(const Hash128& node_key, int64_t end_tokens, std::span<const int32_t> ids);

  // True when a remembered record hung off `node_key` (which starts at token `node_begin`),
  // ended in (after_tokens, tokens.size()], and its ids equal tokens[node_begin, end).
  bool AnyDeeper(const Hash128& node_key, int64_t node_begin, std::span<const int32_t> tokens,
                 int64_t after_tokens) const;

  int64_t size() const { return static_cast<int64_t>(order_.size()); }

 private:
  struct Entry {
    int64_t end_tokens = 0;
    uint64_t fingerprint = 0;
  };

  int64_t capacity_;
  std::unordered_map<Hash128, std::vector<Entry>, Hash128Hasher> by_node_;
  std::deque<Hash128> order_;  // node key of each entry, oldest first
};

}  // namespace ds::cache
