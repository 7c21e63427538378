#include "text/unicode.h"

#include <array>

#include "base/check.h"

namespace ds::text {
namespace {

bool IsContinuation(uint8_t b) { return (b & 0xC0) == 0x80; }

struct ByteLevelTables {
  std::array<std::string, 256> byte_to_utf8;
  std::array<int16_t, 512> cp_to_byte;  // every byte-level code point is below 0x144
};

// GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the other 68 bytes are
// numbered in order from U+0100.
ByteLevelTables BuildByteLevelTables() {
  ByteLevelTables t;
  t.cp_to_byte.fill(-1);
  auto printable = [](int b) {
    return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
  };
  int next_extra = 0;
  for (int b = 0; b < 256; ++b) {
    const uint32_t cp = printable(b) ? static_cast<uint32_t>(b) : 256u + next_extra++;
    AppendUtf8(cp, &t.byte_to_utf8[b]);
    t.cp_to_byte[cp] = static_cast<int16_t>(b);
  }
  return t;
}

const ByteLevelTables& Tables() {
  static const ByteLevelTables tables = BuildByteLevelTables();
  return tables;
}

}  // namespace

size_t Utf8LengthFromLead(uint8_t lead) {
  static constexpr size_t kLengths[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLengths[lead >> 4];
}

uint32_t DecodeUtf8Lenient(std::string_view text, size_t* offset) {
  DS_CHECK(*offset < text.size());
  const size_t i = *offset;
  const size_t left = text.size() - i;
  auto byte = [&](size_t k) { return static_cast<uint8_t>(text[i + k]); };
  const uint8_t b0 = byte(0);
  if ((b0 & 0x80) == 0) {
    *offset += 1;
    return b0;
  }
  size_t n = 0;
  uint32_t cp = 0;
  if ((b0 & 0x40) == 0) {
    n = 0;
  } else if ((b0 & 0x20) == 0) {
    n = 2;
    cp = b0 & 0x1F;
  } else if ((b0 & 0x10) == 0) {
    n = 3;
    cp = b0 & 0x0F;
  } else if ((b0 & 0x08) == 0) {
    n = 4;
    cp = b0 & 0x07;
  }
  bool ok = n != 0 && left >= n;
  for (size_t k = 1; ok && k < n; ++k) {
    ok = IsContinuation(byte(k));
    cp = (cp << 6) | (byte(k) & 0x3F);
  }
  if (!ok || cp > 0x10FFFF) {
    *offset += 1;
    return kReplacementChar;
  }
  *offset += n;
  return cp;
}

std::vector<uint32_t> CodepointsFromUtf8(std::string_view text) {
  std::vector<uint32_t> cps;
  cps.reserve(text.size());
  size_t offset = 0;
  while (offset < text.size()) cps.push_back(DecodeUtf8Lenient(text, &offset));
  return cps;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  DS_CHECK(cp <= 0x10FFFF);
  if (cp <= 0x7F) {
    out->push_back(static_cast<char>(cp));
  } else if (cp <= 0x7FF) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp <= 0xFFFF) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

Utf8Step DecodeUtf8Strict(std::string_view text) {
  DS_CHECK(!text.empty());
  const auto b0 = static_cast<uint8_t>(text[0]);
  if (b0 < 0x80) return {Utf8Status::kComplete, 1};
  // Allowed range of the second byte and total length, per Unicode table 3-7.
  uint8_t lo = 0x80, hi = 0xBF;
  size_t n = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return {Utf8Status::kInvalid, 1};
  }
  for (size_t k = 1; k < n; ++k) {
    if (k >= text.size()) return {Utf8Status::kIncomplete, text.size()};
    const auto b = static_cast<uint8_t>(text[k]);
    const bool in_range = k == 1 ? (b >= lo && b <= hi) : IsContinuation(b);
    if (!in_range) return {Utf8Status::kInvalid, k};
  }
  return {Utf8Status::kComplete, n};
}

bool IsValidUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const Utf8Step step = DecodeUtf8Strict(text.substr(i));
    if (step.status != Utf8Status::kComplete) return false;
    i += step.length;
  }
  return true;
}

std::string SanitizeUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const Utf8Step step = DecodeUtf8Strict(text.substr(i));
    if (step.status == Utf8Status::kComplete) {
      out.append(text.substr(i, step.length));
    } else {
      AppendUtf8(kReplacementChar, &out);
    }
    i += step.length;
  }
  return out;
}

const std::string& ByteToByteLevel(uint8_t byte) { return Tables().byte_to_utf8[byte]; }

int ByteLevelToByte(uint32_t cp) {
  if (cp >= Tables().cp_to_byte.size()) return -1;
  return Tables().cp_to_byte[cp];
}

}  // namespace ds::text
