// Tiny vocabularies for the unit tests (no shared test data needed).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "text/unicode.h"
#include "text/vocab.h"

namespace ds::text::testing {

// Byte-level BPE: ids 0..255 are the byte-level characters of bytes 0..255, then `extra` tokens
// (normal) and `specials` (type given per token), with `merges`.
inline Vocab TinyBpeVocab(const std::vector<std::string>& extra,
                          const std::vector<std::string>& merges,
                          const std::vector<std::pair<std::string, TokenType>>& specials = {}) {
  Vocab v;
  v.model = kModelBpe;
  v.pre = "gpt-2";
  for (int b = 0; b < 256; ++b) v.tokens.push_back(ByteToByteLevel(static_cast<uint8_t>(b)));
  for (const std::string& t : extra) v.tokens.push_back(t);
  v.token_types.assign(v.tokens.size(), TokenType::kNormal);
  for (const auto& [text, type] : specials) {
    v.tokens.push_back(text);
    v.token_types.push_back(type);
  }
  v.merges = merges;
  return v;
}

// SentencePiece: <unk>, <s>, </s>, the 256 <0xXX> byte tokens, then `pieces` with their scores.
inline Vocab TinySpmVocab(const std::vector<std::pair<std::string, float>>& pieces) {
  Vocab v;
  v.model = kModelSpm;
  v.tokens = {"<unk>", "<s>", "</s>"};
  v.token_types = {TokenType::kUnknown, TokenType::kControl, TokenType::kControl};
  for (int b = 0; b < 256; ++b) {
    char hex[8];
    std::snprintf(hex, sizeof(hex), "<0x%02X>", b);
    v.tokens.push_back(hex);
    v.token_types.push_back(TokenType::kByte);
  }
  v.scores.assign(v.tokens.size(), 0.0f);
  for (const auto& [text, score] : pieces) {
    v.tokens.push_back(text);
    v.token_types.push_back(TokenType::kNormal);
    v.scores.push_back(score);
  }
  v.unk_id = 0;
  v.bos_id = 1;
  v.eos_id = 2;
  v.add_bos = true;
  v.add_space_prefix = true;
  return v;
}

// Id of the first token spelled `text` in `v`, or -1.
inline int32_t IdOf(const Vocab& v, const std::string& text) {
  for (size_t i = 0; i < v.tokens.size(); ++i) {
    if (v.tokens[i] == text) return static_cast<int32_t>(i);
  }
  return -1;
}

}  // namespace ds::text::testing
