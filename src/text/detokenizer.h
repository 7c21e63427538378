// IncrementalDetokenizer: turns a stream of generated ids into text that is always valid UTF-8.
// A token's bytes may end inside a multi-byte character (byte-fallback and byte-level BPE split
// CJK and emoji across tokens); those bytes are held back until the character completes. Bytes
// that can never complete a character are replaced by U+FFFD as soon as that is certain.
// The concatenation of every Push() and the final Flush() equals SanitizeUtf8(Decode(ids)).
// Thread safety: one instance per stream; the Tokenizer must outlive it.
#pragma once

#include <cstdint>
#include <string>

#include "text/tokenizer.h"

namespace ds::text {

class IncrementalDetokenizer {
 public:
  explicit IncrementalDetokenizer(const Tokenizer* tokenizer, bool render_special = false)
      : tokenizer_(tokenizer), render_special_(render_special) {}

  // Adds one token; returns the text that became complete (possibly empty).
  std::string Push(int32_t id);
  // Ends the stream: returns what was held back, an unfinished character as U+FFFD.
  std::string Flush();
  // Bytes currently held back (0 to 3).
  size_t num_pending_bytes() const { return pending_.size(); }

 private:
  const Tokenizer* tokenizer_;
  bool render_special_;
  std::string pending_;
};

}  // namespace ds::text
