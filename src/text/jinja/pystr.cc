#include "text/jinja/pystr.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace ds::text::jinja {
namespace {

constexpr char32_t kEscapeBase = 0xDC00;  // surrogateescape: byte b >= 0x80 -> U+DC00 + b

bool InRange(char32_t c, char32_t lo, char32_t hi) { return c >= lo && c <= hi; }

// Python's str.isprintable() is false for Cc, Cf, Cs, Co, Zl, Zp and Zs other than space. This
// lists those categories for the ranges chat text realistically contains.
bool IsPrintable(char32_t c) {
  if (c < 0x20 || InRange(c, 0x7F, 0xA0) || c == 0xAD) return false;
  if (c < 0x300) return true;
  static constexpr char32_t kRanges[][2] = {
      {0x600, 0x605},     {0x61C, 0x61C},     {0x6DD, 0x6DD},     {0x70F, 0x70F},
      {0x890, 0x891},     {0x8E2, 0x8E2},     {0x1680, 0x1680},   {0x180E, 0x180E},
      {0x2000, 0x200F},   {0x2028, 0x202F},   {0x205F, 0x2064},   {0x2066, 0x206F},
      {0x3000, 0x3000},   {0xD800, 0xF8FF},   {0xFEFF, 0xFEFF},   {0xFFF9, 0xFFFB},
      {0xFFFE, 0xFFFF},   {0x110BD, 0x110BD}, {0x110CD, 0x110CD}, {0x13430, 0x1343F},
      {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A}, {0xE0001, 0xE0001}, {0xE0020, 0xE007F},
      {0xF0000, 0x10FFFF}};
  for (const auto& r : kRanges) {
    if (InRange(c, r[0], r[1])) return false;
  }
  return true;
}

bool IsCased(char32_t c) { return ToUpperCp(c) != c || ToLowerCp(c) != c; }

std::string MapCodePoints(std::string_view s, char32_t (*fn)(char32_t)) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : DecodeUtf8(s)) AppendUtf8(out, fn(c));
  return out;
}

bool InSet(char32_t c, const std::u32string& set) {
  return set.find(c) != std::u32string::npos;
}

void AppendHex(std::string& out, const char* prefix, uint32_t value, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%s%0*x", prefix, digits, value);
  out += buf;
}

}  // namespace

void AppendUtf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c >= kEscapeBase + 0x80 && c <= kEscapeBase + 0xFF) {
    out += static_cast<char>(c - kEscapeBase);
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

std::u32string DecodeUtf8(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) {
      out += b0;
      ++i;
      continue;
    }
    int len = b0 >= 0xF0 ? 4 : b0 >= 0xE0 ? 3 : b0 >= 0xC0 ? 2 : 0;
    char32_t c = len == 4 ? (b0 & 0x07) : len == 3 ? (b0 & 0x0F) : (b0 & 0x1F);
    bool valid = len != 0 && i + len <= s.size();
    for (int k = 1; valid && k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      valid = (b & 0xC0) == 0x80;
      c = (c << 6) | (b & 0x3F);
    }
    const char32_t min_by_len[] = {0, 0, 0x80, 0x800, 0x10000};
    valid = valid && c >= min_by_len[len] && c <= 0x10FFFF && !InRange(c, 0xD800, 0xDFFF);
    if (valid) {
      out += c;
      i += len;
    } else {
      out += kEscapeBase + b0;
      ++i;
    }
  }
  return out;
}

std::string EncodeUtf8(std::u32string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : s) AppendUtf8(out, c);
  return out;
}

size_t CodePointCount(std::string_view s) {
  for (char ch : s) {
    if (static_cast<unsigned char>(ch) >= 0x80) return DecodeUtf8(s).size();
  }
  return s.size();
}

bool IsPySpace(char32_t c) {
  return InRange(c, 0x09, 0x0D) || InRange(c, 0x1C, 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || InRange(c, 0x2000, 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

char32_t ToUpperCp(char32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') ? c - 32 : c;
  if ((InRange(c, 0xE0, 0xFE) && c != 0xF7)) return c - 0x20;
  if (c == 0xFF) return 0x178;
  if (c == 0xB5) return 0x39C;
  if (c == 0x131) return 'I';
  if (InRange(c, 0x100, 0x12F) || InRange(c, 0x132, 0x137) || InRange(c, 0x14A, 0x177)) {
    return (c & 1) ? c - 1 : c;
  }
  if (InRange(c, 0x139, 0x148) || InRange(c, 0x179, 0x17E)) return (c & 1) ? c : c - 1;
  if (c == 0x17F) return 'S';
  if (InRange(c, 0x3B1, 0x3C1) || InRange(c, 0x3C3, 0x3CB)) return c - 0x20;
  if (c == 0x3C2) return 0x3A3;
  if (InRange(c, 0x430, 0x44F)) return c - 0x20;
  if (InRange(c, 0x450, 0x45F)) return c - 0x50;
  return c;
}

char32_t ToLowerCp(char32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  if ((InRange(c, 0xC0, 0xDE) && c != 0xD7)) return c + 0x20;
  if (c == 0x178) return 0xFF;
  if (c == 0x130) return 'i';
  if (InRange(c, 0x100, 0x12F) || InRange(c, 0x132, 0x137) || InRange(c, 0x14A, 0x177)) {
    return (c & 1) ? c : c + 1;
  }
  if (InRange(c, 0x139, 0x148) || InRange(c, 0x179, 0x17E)) return (c & 1) ? c + 1 : c;
  if (InRange(c, 0x391, 0x3A1) || InRange(c, 0x3A3, 0x3AB)) return c + 0x20;
  if (InRange(c, 0x410, 0x42F)) return c + 0x20;
  if (InRange(c, 0x400, 0x40F)) return c + 0x50;
  return c;
}

std::string PyUpper(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : DecodeUtf8(s)) {
    if (c == 0xDF) {
      out += "SS";  // the one full case mapping common in European text
    } else {
      AppendUtf8(out, ToUpperCp(c));
    }
  }
  return out;
}
std::string PyLower(std::string_view s) { return MapCodePoints(s, ToLowerCp); }

std::string PyCapitalize(std::string_view s) {
  std::u32string cps = DecodeUtf8(s);
  for (size_t i = 0; i < cps.size(); ++i) cps[i] = i == 0 ? ToUpperCp(cps[i]) : ToLowerCp(cps[i]);
  return EncodeUtf8(cps);
}

std::string PyTitle(std::string_view s) {
  std::u32string cps = DecodeUtf8(s);
  bool previous_cased = false;
  for (char32_t& c : cps) {
    c = previous_cased ? ToLowerCp(c) : ToUpperCp(c);
    previous_cased = IsCased(c);
  }
  return EncodeUtf8(cps);
}

bool PyIsCaseUniform(std::string_view s, bool upper) {
  bool cased = false;
  for (char32_t c : DecodeUtf8(s)) {
    const bool is_upper = ToLowerCp(c) != c;
    const bool is_lower = ToUpperCp(c) != c;
    if ((upper && is_lower) || (!upper && is_upper)) return false;
    cased = cased || is_upper || is_lower;
  }
  return cased;
}

std::string PyStrip(std::string_view s, const std::optional<std::string>& chars, bool left,
                    bool right) {
  const std::u32string cps = DecodeUtf8(s);
  const std::u32string set = chars ? DecodeUtf8(*chars) : std::u32string();
  auto strip_it = [&](char32_t c) { return chars ? InSet(c, set) : IsPySpace(c); };
  size_t begin = 0, end = cps.size();
  while (left && begin < end && strip_it(cps[begin])) ++begin;
  while (right && end > begin && strip_it(cps[end - 1])) --end;
  return EncodeUtf8(std::u32string_view(cps).substr(begin, end - begin));
}

std::vector<std::string> PySplit(std::string_view s, const std::optional<std::string>& sep,
                                 int64_t max_split) {
  std::vector<std::string> parts;
  if (sep) {
    size_t pos = 0;
    while (max_split < 0 || static_cast<int64_t>(parts.size()) < max_split) {
      size_t hit = s.find(*sep, pos);
      if (hit == std::string_view::npos) break;
      parts.emplace_back(s.substr(pos, hit - pos));
      pos = hit + sep->size();
    }
    parts.emplace_back(s.substr(pos));
    return parts;
  }
  const std::u32string cps = DecodeUtf8(s);
  size_t i = 0;
  while (true) {
    while (i < cps.size() && IsPySpace(cps[i])) ++i;
    if (i == cps.size()) break;
    if (max_split >= 0 && static_cast<int64_t>(parts.size()) == max_split) {
      size_t end = cps.size();
      while (end > i && IsPySpace(cps[end - 1])) --end;
      parts.push_back(EncodeUtf8(std::u32string_view(cps).substr(i, end - i)));
      break;
    }
    size_t start = i;
    while (i < cps.size() && !IsPySpace(cps[i])) ++i;
    parts.push_back(EncodeUtf8(std::u32string_view(cps).substr(start, i - start)));
  }
  return parts;
}

std::vector<std::string> PyRSplit(std::string_view s, const std::optional<std::string>& sep,
                                  int64_t max_split) {
  std::vector<std::string> parts;
  if (sep) {
    size_t end = s.size();
    while (max_split < 0 || static_cast<int64_t>(parts.size()) < max_split) {
      if (end < sep->size()) break;
      size_t hit = s.rfind(*sep, end - sep->size());
      if (hit == std::string_view::npos) break;
      parts.emplace_back(s.substr(hit + sep->size(), end - hit - sep->size()));
      end = hit;
    }
    parts.emplace_back(s.substr(0, end));
  } else {
    const std::u32string cps = DecodeUtf8(s);
    size_t i = cps.size();
    while (true) {
      while (i > 0 && IsPySpace(cps[i - 1])) --i;
      if (i == 0) break;
      if (max_split >= 0 && static_cast<int64_t>(parts.size()) == max_split) {
        size_t begin = 0;
        while (begin < i && IsPySpace(cps[begin])) ++begin;
        parts.push_back(EncodeUtf8(std::u32string_view(cps).substr(begin, i - begin)));
        break;
      }
      size_t end = i;
      while (i > 0 && !IsPySpace(cps[i - 1])) --i;
      parts.push_back(EncodeUtf8(std::u32string_view(cps).substr(i, end - i)));
    }
  }
  return {parts.rbegin(), parts.rend()};
}

std::string PyReplace(std::string_view s, std::string_view old_sub, std::string_view new_sub,
                      int64_t count) {
  std::string out;
  if (old_sub.empty()) {
    const std::u32string cps = DecodeUtf8(s);
    int64_t done = 0;
    for (size_t i = 0; i <= cps.size(); ++i) {
      if (count < 0 || done < count) {
        out += new_sub;
        ++done;
      }
      if (i < cps.size()) AppendUtf8(out, cps[i]);
    }
    return out;
  }
  size_t pos = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    size_t hit = s.find(old_sub, pos);
    if (hit == std::string_view::npos) break;
    out.append(s.substr(pos, hit - pos));
    out.append(new_sub);
    pos = hit + old_sub.size();
    ++done;
  }
  out.append(s.substr(pos));
  return out;
}

int64_t PyCount(std::string_view s, std::string_view sub) {
  if (sub.empty()) return static_cast<int64_t>(CodePointCount(s)) + 1;
  int64_t n = 0;
  for (size_t pos = s.find(sub); pos != std::string_view::npos; pos = s.find(sub, pos + sub.size()))
    ++n;
  return n;
}

std::string FormatPyFloat(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific);
  std::string_view sci(buf, res.ptr - buf);  // "-d.ddde+XX"
  std::string out;
  if (sci.front() == '-') {
    out += '-';
    sci.remove_prefix(1);
  }
  size_t e_pos = sci.find('e');
  std::string digits;
  for (char ch : sci.substr(0, e_pos)) {
    if (ch != '.') digits += ch;
  }
  int exponent = 0;
  std::from_chars(sci.data() + e_pos + (sci[e_pos + 1] == '+' ? 2 : 1), sci.data() + sci.size(),
                  exponent);
  const int decpt = exponent + 1;
  const int n = static_cast<int>(digits.size());
  if (decpt <= -4 || decpt > 16) {
    out += digits[0];
    if (n > 1) out += "." + digits.substr(1);
    char exp_buf[16];
    std::snprintf(exp_buf, sizeof(exp_buf), "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    out += exp_buf;
  } else if (decpt <= 0) {
    out += "0." + std::string(-decpt, '0') + digits;
  } else if (decpt >= n) {
    out += digits + std::string(decpt - n, '0') + ".0";
  } else {
    out += digits.substr(0, decpt) + "." + digits.substr(decpt);
  }
  return out;
}

std::string PyReprString(std::string_view s) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (char32_t c : DecodeUtf8(s)) {
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (IsPrintable(c)) {
      AppendUtf8(out, c);
    } else if (c < 0x100) {
      AppendHex(out, "\\x", c, 2);
    } else if (c < 0x10000) {
      AppendHex(out, "\\u", c, 4);
    } else {
      AppendHex(out, "\\U", c, 8);
    }
  }
  out += quote;
  return out;
}

void AppendJsonString(std::string& out, std::string_view s, bool ensure_ascii) {
  out += '"';
  for (char32_t c : DecodeUtf8(s)) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          AppendHex(out, "\\u", c, 4);
        } else if (c < 0x80 || !ensure_ascii) {
          AppendUtf8(out, c);
        } else if (c < 0x10000) {
          AppendHex(out, "\\u", c, 4);
        } else {
          const uint32_t v = c - 0x10000;
          AppendHex(out, "\\u", 0xD800 + (v >> 10), 4);
          AppendHex(out, "\\u", 0xDC00 + (v & 0x3FF), 4);
        }
    }
  }
  out += '"';
}

}  // namespace ds::text::jinja
