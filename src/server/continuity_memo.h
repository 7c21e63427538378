// Generated-id continuity: agent clients send each reply back as text in the next request, and
// re-tokenising that text need not give the ids the model generated (BPE merges across what
// were separate steps, a template's own whitespace), which would end the cached prefix inside
// the reply. The memo remembers the ids behind recent prompt texts and replies, and tokenises a
// new prompt as the longest remembered text it starts with, followed by the rest on its own.
// Thread safety: all methods may be called concurrently.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "text/tokenizer.h"

namespace ds::server {

class ContinuityMemo {
 public:
  // REQUIRES: max_entries > 0.
  explicit ContinuityMemo(size_t max_entries = 32) : max_entries_(max_entries) {}

  // `text` is what `ids` decode to, rendered as the chat template writes it (special tokens as
  // text). The newest entries are kept; recording a text again refreshes it.
  void Record(std::string text, std::vector<int32_t> ids);

  // Encode(text) with special tokens parsed, where the longest remembered prefix of `text`
  // keeps its remembered ids. `reused_tokens` (optional) reports how many ids came from the memo.
  std::vector<int32_t> Encode(const text::Tokenizer& tokenizer, std::string_view text,
                              int64_t* reused_tokens = nullptr);

 private:
  struct Entry {
    std::string text;
    std::vector<int32_t> ids;
  };

  size_t max_entries_;
  std::mutex mu_;
  std::deque<Entry> entries_;  // oldest first
};

}  // namespace ds::server
