#include "text/jinja/lexer.h"

#include <algorithm>
#include <cstdlib>

#include "text/jinja/pystr.h"

namespace ds::text::jinja {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || IsDigit(c); }
// 0-15 for a hex digit, 99 otherwise.
int DigitValue(char c) {
  if (IsDigit(c)) return c - '0';
  const char l = static_cast<char>(c | 0x20);
  return (l >= 'a' && l <= 'f') ? l - 'a' + 10 : 99;
}

// Byte length of the Python-whitespace code point starting at s[i], or 0.
size_t SpaceLenAt(std::string_view s, size_t i) {
  for (size_t len = 1; len <= 3 && i + len <= s.size(); ++len) {
    const std::u32string cps = DecodeUtf8(s.substr(i, len));
    if (cps.size() == 1 && IsPySpace(cps[0]) && (len > 1 || cps[0] < 0x80)) return len;
  }
  return 0;
}

// Byte length of the Python-whitespace code point ending just before s[end], or 0.
size_t SpaceLenBefore(std::string_view s, size_t end) {
  for (size_t len = 1; len <= 3 && len <= end; ++len) {
    if (SpaceLenAt(s, end - len) == len) return len;
  }
  return 0;
}

size_t SkipSpace(std::string_view s, size_t i) {
  while (size_t len = SpaceLenAt(s, i)) i += len;
  return i;
}

// Decodes a Jinja string literal body the way Python's "unicode-escape" codec does.
bool DecodeEscapes(std::string_view body, std::string* out) {
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\' || i + 1 == body.size()) {
      *out += body[i];
      continue;
    }
    const char e = body[++i];
    static constexpr std::string_view kSimple = "\\'\"abfnrtv";
    static constexpr std::string_view kMapped = "\\'\"\a\b\f\n\r\t\v";
    if (size_t k = kSimple.find(e); k != std::string_view::npos) {
      *out += kMapped[k];
    } else if (e == '\n') {
      // A backslash-newline is a line continuation.
    } else if (e >= '0' && e <= '7') {
      uint32_t v = 0;
      size_t n = 0;
      for (; n < 3 && i < body.size() && body[i] >= '0' && body[i] <= '7'; ++n, ++i) {
        v = v * 8 + (body[i] - '0');
      }
      --i;
      AppendUtf8(*out, v);
    } else if (e == 'x' || e == 'u' || e == 'U') {
      const size_t digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
      uint32_t v = 0;
      for (size_t k = 1; k <= digits; ++k) {
        if (i + k >= body.size()) return false;
        const char h = body[i + k];
        const int d = DigitValue(h);
        if (d >= 16) return false;
        v = v * 16 + d;
      }
      if (v > 0x10FFFF) return false;
      AppendUtf8(*out, v);
      i += digits;
    } else {
      *out += '\\';
      *out += e;
    }
  }
  return true;
}

class Lexer {
 public:
  Lexer(std::string source, const LexOptions& options)
      : src_(std::move(source)), options_(options) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < src_.size(); ++i) {
      if (src_[i] == '\n') line_starts_.push_back(i + 1);
    }
  }

  StatusOr<std::vector<Token>> Run() {
    while (pos_ < src_.size()) {
      size_t start = src_.find('{', pos_);
      while (start != std::string::npos && start + 1 < src_.size() &&
             std::string_view("{%#").find(src_[start + 1]) == std::string_view::npos) {
        start = src_.find('{', start + 1);
      }
      if (start == std::string::npos || start + 1 >= src_.size()) {
        Emit(TokenType::kData, src_.substr(pos_), pos_);
        break;
      }
      DS_RETURN_IF_ERROR(LexTagAt(start));
    }
    Emit(TokenType::kEnd, "", src_.size());
    return std::move(tokens_);
  }

 private:
  Status Error(size_t offset, const std::string& problem) const {
    Token t;
    Locate(offset, &t);
    return InvalidArgumentError("template syntax error at line " + std::to_string(t.line) +
                                ", column " + std::to_string(t.column) + ": " + problem);
  }

  void Locate(size_t offset, Token* t) const {
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    const size_t line_index = static_cast<size_t>(it - line_starts_.begin()) - 1;
    t->line = static_cast<int>(line_index + 1);
    t->column = static_cast<int>(offset - line_starts_[line_index] + 1);
  }

  Token& Emit(TokenType type, std::string value, size_t offset) {
    Token t;
    t.type = type;
    t.value = std::move(value);
    Locate(offset, &t);
    tokens_.push_back(std::move(t));
    return tokens_.back();
  }

  // The text before a tag, after the `-` modifier or lstrip_blocks has removed whitespace.
  std::string_view StripBefore(size_t text_begin, size_t text_end, char sign, bool variable) {
    std::string_view text(src_.data() + text_begin, text_end - text_begin);
    if (sign == '-') {
      size_t end = text.size();
      while (size_t len = SpaceLenBefore(text, end)) end -= len;
      return text.substr(0, end);
    }
    if (sign == '+' || !options_.lstrip_blocks || variable) return text;
    const size_t newline = text.rfind('\n');
    const size_t l_pos = newline == std::string_view::npos ? 0 : newline + 1;
    const bool line_starting = text_begin == 0 || src_[text_begin - 1] == '\n';
    if (l_pos == 0 && !line_starting) return text;
    if (l_pos < text.size() && SkipSpace(text, l_pos) == text.size()) return text.substr(0, l_pos);
    return text;
  }

  // Consumes a block or comment end that starts at `i` with an optional `-`/`+`.
  size_t AfterBlockEnd(size_t i, char sign, size_t close_len) {
    i += close_len;
    if (sign == '-') return SkipSpace(src_, i);
    if (sign == 0 && options_.trim_blocks && i < src_.size() && src_[i] == '\n') ++i;
    return i;
  }

  Status LexTagAt(size_t start) {
    const char kind = src_[start + 1];
    size_t p = start + 2;
    char sign = 0;
    if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) sign = src_[p++];
    Emit(TokenType::kData, std::string(StripBefore(pos_, start, sign, kind == '{')), pos_);
    if (tokens_.back().value.empty()) tokens_.pop_back();
    if (kind == '#') return LexComment(start, p);
    if (kind == '%') {
      size_t q = SkipSpace(src_, p);
      if (src_.compare(q, 3, "raw") == 0 && !IsNameChar(q + 3 < src_.size() ? src_[q + 3] : ' ')) {
        q = SkipSpace(src_, q + 3);
        if (src_.compare(q, 3, "-%}") == 0) return LexRaw(SkipSpace(src_, q + 3));
        if (src_.compare(q, 2, "%}") == 0) return LexRaw(q + 2);
      }
    }
    return LexTag(start, p, kind == '%');
  }

  Status LexComment(size_t start, size_t p) {
    const size_t close = src_.find("#}", p);
    if (close == std::string::npos) return Error(start, "Missing end of comment tag");
    char sign = 0;
    if (close > p && (src_[close - 1] == '-' || src_[close - 1] == '+')) sign = src_[close - 1];
    pos_ = AfterBlockEnd(close, sign, 2);
    return OkStatus();
  }

  Status LexRaw(size_t body_begin) {
    for (size_t at = src_.find("{%", body_begin); at != std::string::npos;
         at = src_.find("{%", at + 1)) {
      size_t q = at + 2;
      char sign = 0;
      if (q < src_.size() && (src_[q] == '-' || src_[q] == '+')) sign = src_[q++];
      q = SkipSpace(src_, q);
      if (src_.compare(q, 6, "endraw") != 0) continue;
      q = SkipSpace(src_, q + 6);
      char end_sign = 0;
      if (q < src_.size() && (src_[q] == '-' || src_[q] == '+')) end_sign = src_[q++];
      if (src_.compare(q, 2, "%}") != 0) continue;
      Emit(TokenType::kData, std::string(StripBefore(body_begin, at, sign, false)), body_begin);
      if (tokens_.back().value.empty()) tokens_.pop_back();
      pos_ = AfterBlockEnd(q, end_sign, 2);
      return OkStatus();
    }
    return Error(body_begin, "Missing end of raw directive");
  }

  Status LexTag(size_t start, size_t p, bool block) {
    Emit(block ? TokenType::kBlockBegin : TokenType::kVariableBegin, "", start);
    std::string balance;  // expected closing brackets
    while (true) {
      if (p >= src_.size()) {
        return Error(start, block ? "unexpected end of template, expected '%}'"
                                  : "unexpected end of template, expected '}}'");
      }
      if (balance.empty()) {
        std::string_view rest(src_.data() + p, src_.size() - p);
        if (block) {
          for (char sign : {'+', '-'}) {
            if (rest.size() >= 3 && rest[0] == sign && rest.substr(1, 2) == "%}") {
              Emit(TokenType::kBlockEnd, "", p);
              pos_ = AfterBlockEnd(p + 1, sign, 2);
              return OkStatus();
            }
          }
          if (rest.substr(0, 2) == "%}") {
            Emit(TokenType::kBlockEnd, "", p);
            pos_ = AfterBlockEnd(p, 0, 2);
            return OkStatus();
          }
        } else if (rest.substr(0, 3) == "-}}" || rest.substr(0, 2) == "}}") {
          Emit(TokenType::kVariableEnd, "", p);
          pos_ = rest[0] == '-' ? SkipSpace(src_, p + 3) : p + 2;
          return OkStatus();
        }
      }
      if (size_t len = SpaceLenAt(src_, p)) {
        p += len;
        continue;
      }
      DS_ASSIGN_OR_RETURN(p, LexOne(p, &balance));
    }
  }

  // Lexes one name, number, string or operator at `p`; returns the position after it.
  StatusOr<size_t> LexOne(size_t p, std::string* balance) {
    const char c = src_[p];
    if (IsDigit(c)) return LexNumber(p);
    if (IsNameStart(c)) {
      size_t e = p;
      while (e < src_.size() && IsNameChar(src_[e])) ++e;
      Emit(TokenType::kName, src_.substr(p, e - p), p);
      return e;
    }
    if (c == '\'' || c == '"') {
      size_t e = p + 1;
      while (e < src_.size() && src_[e] != c) e += src_[e] == '\\' ? 2 : 1;
      if (e >= src_.size()) return Error(p, std::string("unexpected char '") + c + "'");
      std::string decoded;
      if (!DecodeEscapes(std::string_view(src_).substr(p + 1, e - p - 1), &decoded)) {
        return Error(p, "invalid escape sequence in string literal");
      }
      Emit(TokenType::kString, std::move(decoded), p);
      return e + 1;
    }
    static constexpr std::string_view kTwo[] = {"//", "**", "==", "!=", ">=", "<="};
    for (std::string_view op : kTwo) {
      if (src_.compare(p, 2, op) == 0) {
        Emit(TokenType::kOperator, std::string(op), p);
        return p + 2;
      }
    }
    if (std::string_view("+-/*%~[](){}><=.:|,;").find(c) == std::string_view::npos) {
      return Error(p, std::string("unexpected char '") + c + "'");
    }
    if (c == '(' || c == '[' || c == '{') {
      *balance += c == '(' ? ')' : c == '[' ? ']' : '}';
    } else if (c == ')' || c == ']' || c == '}') {
      if (balance->empty()) return Error(p, std::string("unexpected '") + c + "'");
      if (balance->back() != c) {
        return Error(p, std::string("unexpected '") + c + "', expected '" + balance->back() + "'");
      }
      balance->pop_back();
    }
    Emit(TokenType::kOperator, std::string(1, c), p);
    return p + 1;
  }

  // Digits with single underscores between them, as Python literals allow.
  size_t ScanDigits(size_t p, bool (*ok)(char)) const {
    size_t e = p;
    while (e < src_.size() && ok(src_[e])) {
      ++e;
      if (e + 1 < src_.size() && src_[e] == '_' && ok(src_[e + 1])) ++e;
    }
    return e;
  }

  StatusOr<size_t> LexNumber(size_t p) {
    auto digit = [](char ch) { return IsDigit(ch); };
    const bool after_dot = p > 0 && src_[p - 1] == '.';
    size_t e = ScanDigits(p, digit);
    size_t f = e;
    bool is_float = false;
    if (!after_dot) {
      if (f + 1 < src_.size() && src_[f] == '.' && IsDigit(src_[f + 1])) {
        f = ScanDigits(f + 1, digit);
        is_float = true;
      }
      if (f < src_.size() && (src_[f] == 'e' || src_[f] == 'E')) {
        size_t g = f + 1;
        if (g < src_.size() && (src_[g] == '+' || src_[g] == '-')) ++g;
        if (g < src_.size() && IsDigit(src_[g])) {
          f = ScanDigits(g, digit);
          is_float = true;
        }
      }
    }
    if (is_float) {
      std::string text;
      for (size_t i = p; i < f; ++i) {
        if (src_[i] != '_') text += src_[i];
      }
      Emit(TokenType::kFloat, text, p).float_value = std::strtod(text.c_str(), nullptr);
      return f;
    }
    return LexInteger(p);
  }

  // Jinja's integer_re: 0b/0o/0x literals, "[1-9](_?\d)*" or "0(_?0)*".
  StatusOr<size_t> LexInteger(size_t p) {
    int base = 10;
    if (src_[p] == '0' && p + 1 < src_.size()) {
      const char b = static_cast<char>(src_[p + 1] | 0x20);
      base = b == 'x' ? 16 : b == 'o' ? 8 : b == 'b' ? 2 : 10;
    }
    size_t e = base == 10 ? p + 1 : p + 2;
    uint64_t value = base == 10 ? static_cast<uint64_t>(src_[p] - '0') : 0;
    size_t num_digits = 0;
    while (true) {
      size_t k = e;
      if (k < src_.size() && src_[k] == '_') ++k;
      const int d = k < src_.size() ? DigitValue(src_[k]) : 99;
      if (d >= base || (base == 10 && src_[p] == '0' && d != 0)) break;
      if (value > (static_cast<uint64_t>(INT64_MAX) - d) / base) {
        return Error(p, "integer literal too large");
      }
      value = value * base + d;
      ++num_digits;
      e = k + 1;
    }
    if (base != 10 && num_digits == 0) {  // "0x" without digits: the integer 0, then a name
      e = p + 1;
      value = 0;
    }
    Emit(TokenType::kInteger, src_.substr(p, e - p), p).int_value = static_cast<int64_t>(value);
    return e;
  }

  std::string src_;
  LexOptions options_;
  size_t pos_ = 0;
  std::vector<size_t> line_starts_;
  std::vector<Token> tokens_;
};

// Jinja splits on \r\n, \r and \n, drops one final newline and joins with \n.
std::string NormalizeNewlines(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += source[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace

StatusOr<std::vector<Token>> Tokenize(std::string_view source, const LexOptions& options) {
  Lexer lexer(NormalizeNewlines(source), options);
  return lexer.Run();
}

}  // namespace ds::text::jinja
