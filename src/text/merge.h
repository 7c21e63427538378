// The two merge loops behind the tokenizers, written to give llama.cpp's ids:
//  - BpeMerger: byte-level BPE over one pre-tokenized word, lowest merge rank first (ties:
//  leftmost);
//  - SpmEncode: SentencePiece-style merging over a whole fragment, highest token score first
//    (ties: leftmost), with byte fallback for pieces that are not tokens.
// Both use a priority queue over adjacent pairs: O(n log n) in the length of the input.
// Thread safety: BpeMerger is immutable after construction; all calls are re-entrant.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "text/token_lookup.h"

namespace ds::text {

class BpeMerger {
 public:
  // `merges` are "left right" lines; the rank of a pair is its line index (first one wins).
  explicit BpeMerger(const std::vector<std::string>& merges);

  // Appends the ids of `word` (already in byte-level form). With `ignore_merges`, a word that is
  // itself a token is emitted whole. Pieces left that are not tokens fall back to one token per
  // byte where a single-byte token exists (llama.cpp's behaviour), else they are dropped.
  void EncodeWord(std::string_view word, const TokenLookup& tokens, bool ignore_merges,
                  std::vector<int32_t>* out) const;

 private:
  int32_t Rank(std::string_view left, std::string_view right, std::string* scratch) const;

  StringMap<int32_t> ranks_;  // key: left + '\0' + right
};

// Appends the ids of `text` (spaces already escaped as U+2581). `scores` is indexed by id;
// `byte_tokens[b]` is the token for byte b (<0xXX>), or -1 to drop that byte.
void SpmEncode(std::string_view text, const TokenLookup& tokens, std::span<const float> scores,
               std::span<const int32_t> byte_tokens, std::vector<int32_t>* out);

}  // namespace ds::text
