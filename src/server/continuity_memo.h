// Generated-id continuity: agent clients send each reply back as text in the next request, and
// re-tokenising that text need not give the ids the model generated (BPE merges across what
// were separate steps), which would end the cached prefix inside the reply. The memo remembers
// recent prompts with the ids of their replies, and tokenises a new prompt as the longest
// remembered prompt it starts with, then as many of that reply's ids as the new text repeats
// (all of them when the client kept the reply, fewer when it cut it at a stop string or kept only
// what streamed before it disconnected), then the rest on its own.
// Thread safety: all methods may be called concurrently.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "text/tokenizer.h"

namespace ds::server {

class ContinuityMemo {
 public:
  // REQUIRES: tokenizer outlives the memo; max_entries > 0.
  explicit ContinuityMemo(const text::Tokenizer* tokenizer, size_t max_entries = 32)
      : tokenizer_(tokenizer), max_entries_(max_entries) {}

  // A rendered prompt, its ids, and the ids generated after it (possibly none). The newest
  // entries are kept; recording the same prompt again replaces its entry.
  void Record(std::string prompt_text, std::vector<int32_t> prompt_ids,
              std::span<const int32_t> reply_ids);

  // Ids the server produced before it restarted (a stored conversation, prompt and reply), to
  // be reused as far as a new prompt's text repeats their pieces.
  void Seed(std::span<const int32_t> ids);

  // Encode(text) with special tokens parsed, except that the longest remembered part keeps its
  // remembered ids. `reused_tokens` (optional) reports how many ids came from the memo.
  std::vector<int32_t> Encode(std::string_view text, int64_t* reused_tokens = nullptr);

 private:
  struct Entry {
    std::string text;  // the prompt's text, then the reply's token pieces (specials as text)
    size_t prompt_chars = 0;
    std::vector<int32_t> ids;  // prompt ids, then reply ids
    size_t prompt_ids = 0;
    std::vector<size_t> reply_ends;  // per reply id: where its piece ends in `text`
  };
  struct Reuse {
    size_t chars = 0;
    size_t ids = 0;
  };
  Reuse Match(const Entry& entry, std::string_view text) const;

  const text::Tokenizer* tokenizer_;
  size_t max_entries_;
  std::mutex mu_;
  std::deque<Entry> entries_;  // oldest first
};

}  // namespace ds::server
