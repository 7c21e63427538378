#include "cache/ghosts.h"

#include "base/check.h"
#include "cache/chain_hash.h"

namespace ds::cache {

Ghosts::Ghosts(int64_t capacity) : capacity_(capacity) { DS_CHECK(capacity_ >= 0); }

void Ghosts::Add(const Hash128& node_key, int64_t end_tokens, std::span<const int32_t> ids) {
  if (capacity_ == 0) return;
  if (size() == capacity_) {
    // Entries of one node are appended in order, so its oldest is at the front of its vector.
    auto it = by_node_.find(order_.front());
    it->second.erase(it->second.begin());
    if (it->second.empty()) by_node_.erase(it);
    order_.pop_front();
  }
  by_node_[node_key].push_back(Entry{end_tokens, IdsFingerprint(ids)});
  order_.push_back(node_key);
}

bool Ghosts::AnyDeeper(const Hash128& node_key, int64_t node_begin, std::span<const int32_t> tokens,
                       int64_t after_tokens) const {
  auto it = by_node_.find(node_key);
  if (it == by_node_.end()) return false;
  const auto num_tokens = static_cast<int64_t>(tokens.size());
  for (const Entry& entry : it->second) {
    if (entry.end_tokens <= after_tokens || entry.end_tokens > num_tokens) continue;
    if (entry.end_tokens < node_begin) continue;
    std::span<const int32_t> ids = tokens.subspan(node_begin, entry.end_tokens - node_begin);
    if (IdsFingerprint(ids) == entry.fingerprint) return true;
  }
  return false;
}

}  // namespace ds::cache
