#include "server/continuity_memo.h"

#include <algorithm>

namespace ds::server {
namespace {

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

void ContinuityMemo::Record(std::string prompt_text, std::vector<int32_t> prompt_ids,
                            std::span<const int32_t> reply_ids) {
  if (prompt_text.empty() || prompt_ids.empty()) return;
  Entry entry;
  entry.text = std::move(prompt_text);
  entry.prompt_chars = entry.text.size();
  entry.ids = std::move(prompt_ids);
  entry.prompt_ids = entry.ids.size();
  for (int32_t id : reply_ids) {
    entry.text += tokenizer_->TokenToPiece(id, /*render_special=*/true);
    entry.ids.push_back(id);
    entry.reply_ends.push_back(entry.text.size());
  }
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(entries_, [&](const Entry& e) {
    return e.prompt_chars == entry.prompt_chars &&
           e.text.compare(0, e.prompt_chars, entry.text, 0, entry.prompt_chars) == 0;
  });
  entries_.push_back(std::move(entry));
  while (entries_.size() > max_entries_) entries_.pop_front();
}

void ContinuityMemo::Seed(std::span<const int32_t> ids) {
  if (ids.empty()) return;
  // No prompt that must match whole: any prefix of whole ids whose text a prompt repeats counts.
  Entry entry;
  for (int32_t id : ids) {
    entry.text += tokenizer_->TokenToPiece(id, /*render_special=*/true);
    entry.ids.push_back(id);
    entry.reply_ends.push_back(entry.text.size());
  }
  std::lock_guard<std::mutex> lock(mu_);
  entries_.push_back(std::move(entry));
  while (entries_.size() > max_entries_) entries_.pop_front();
}

ContinuityMemo::Reuse ContinuityMemo::Match(const Entry& entry, std::string_view text) const {
  if (text.size() < entry.prompt_chars ||
      text.compare(0, entry.prompt_chars, entry.text, 0, entry.prompt_chars) != 0) {
    return {};
  }
  const auto mismatch = std::mismatch(entry.text.begin() + entry.prompt_chars, entry.text.end(),
                                      text.begin() + entry.prompt_chars, text.end());
  const auto common = static_cast<size_t>(mismatch.first - entry.text.begin());
  // Whole reply ids inside the common part, cut where the rest starts a character (the rest is
  // tokenised on its own and must be valid UTF-8).
  size_t kept = std::upper_bound(entry.reply_ends.begin(), entry.reply_ends.end(), common) -
                entry.reply_ends.begin();
  auto end_of = [&](size_t k) { return k == 0 ? entry.prompt_chars : entry.reply_ends[k - 1]; };
  while (kept > 0 && end_of(kept) < text.size() && IsContinuationByte(text[end_of(kept)])) --kept;
  return Reuse{end_of(kept), entry.prompt_ids + kept};
}

std::vector<int32_t> ContinuityMemo::Encode(std::string_view text, int64_t* reused_tokens) {
  std::vector<int32_t> ids;
  Reuse best;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const Entry* best_entry = nullptr;
    for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
      const Reuse reuse = Match(*it, text);
      if (reuse.chars > best.chars) {
        best = reuse;
        best_entry = &*it;
      }
    }
    if (best_entry != nullptr)
      ids.assign(best_entry->ids.begin(), best_entry->ids.begin() + best.ids);
  }
  if (reused_tokens != nullptr) *reused_tokens = static_cast<int64_t>(ids.size());
  if (best.chars == 0)
    return tokenizer_->Encode(text, /*add_special=*/true, /*parse_special=*/true);
  std::vector<int32_t> rest = tokenizer_->Encode(text.substr(best.chars), /*add_special=*/false,
                                                 /*parse_special=*/true);
  ids.insert(ids.end(), rest.begin(), rest.end());
  return ids;
}

}  // namespace ds::server
