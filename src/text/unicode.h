// UTF-8 and byte-level helpers shared by the tokenizers and the detokenizer.
// All functions are pure and thread-safe.
//
// Two decoders live here on purpose:
//  - the lenient one reproduces how llama.cpp reads text before tokenising (the lead byte alone
//    decides the length; a bad sequence becomes U+FFFD and consumes one byte), so token ids match;
//  - the strict one (well-formed UTF-8 per Unicode table 3-7) guards what we hand to clients.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ds::text {

inline constexpr uint32_t kReplacementChar = 0xFFFD;

// Length of a UTF-8 sequence from its lead byte's high nibble (1 for continuation bytes).
size_t Utf8LengthFromLead(uint8_t lead);

// Decodes one code point at *offset (lenient, see above) and advances *offset.
// REQUIRES: *offset < text.size().
uint32_t DecodeUtf8Lenient(std::string_view text, size_t* offset);
std::vector<uint32_t> CodepointsFromUtf8(std::string_view text);

// Appends the UTF-8 encoding of `cp` (surrogates are encoded as-is; cp <= 0x10FFFF).
void AppendUtf8(uint32_t cp, std::string* out);

// Strict decoding of the sequence starting at text[0].
enum class Utf8Status { kComplete, kIncomplete, kInvalid };
struct Utf8Step {
  Utf8Status status;
  // kComplete: bytes of the sequence; kIncomplete: bytes seen (all of text);
  // kInvalid: bytes to replace by one U+FFFD (the maximal ill-formed subpart, >= 1).
  size_t length;
};
// REQUIRES: !text.empty().
Utf8Step DecodeUtf8Strict(std::string_view text);

bool IsValidUtf8(std::string_view text);
// Replaces every ill-formed subpart (including a truncated tail) by U+FFFD.
std::string SanitizeUtf8(std::string_view text);

// GPT-2 byte-level alphabet: each byte maps to one printable code point.
// Returns the UTF-8 of the code point standing for `byte`.
const std::string& ByteToByteLevel(uint8_t byte);
// The byte a byte-level code point stands for, or -1 when `cp` is not in the alphabet.
int ByteLevelToByte(uint32_t cp);

}  // namespace ds::text
