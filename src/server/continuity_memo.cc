#include "server/continuity_memo.h"

#include <algorithm>

namespace ds::server {

void ContinuityMemo::Record(std::string text, std::vector<int32_t> ids) {
  if (text.empty() || ids.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(entries_, [&](const Entry& e) { return e.text == text; });
  entries_.push_back(Entry{std::move(text), std::move(ids)});
  while (entries_.size() > max_entries_) entries_.pop_front();
}

std::vector<int32_t> ContinuityMemo::Encode(const text::Tokenizer& tokenizer,
                                            std::string_view text, int64_t* reused_tokens) {
  std::vector<int32_t> ids;
  size_t prefix_chars = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const Entry* best = nullptr;
    for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
      if (it->text.size() > prefix_chars && text.starts_with(it->text)) {
        best = &*it;
        prefix_chars = it->text.size();
      }
    }
    if (best != nullptr) ids = best->ids;
  }
  if (reused_tokens != nullptr) *reused_tokens = static_cast<int64_t>(ids.size());
  if (prefix_chars == 0) return tokenizer.Encode(text, /*add_special=*/true, /*parse_special=*/true);
  std::vector<int32_t> rest = tokenizer.Encode(text.substr(prefix_chars), /*add_special=*/false,
                                               /*parse_special=*/true);
  ids.insert(ids.end(), rest.begin(), rest.end());
  return ids;
}

}  // namespace ds::server
