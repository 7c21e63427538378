// Python str semantics over UTF-8 bytes, for the Jinja engine. Python strings are sequences of code
// points, so every length, index, slice, case and whitespace rule here works on code points while
// storage stays UTF-8. Invalid UTF-8 bytes decode to U+DC80+byte (Python's surrogateescape) so
// that decode/encode round-trips any byte string.
// Case mapping covers ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic; other scripts are
// treated as uncased (documented divergence from CPython's full Unicode tables).
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ds::text::jinja {

std::u32string DecodeUtf8(std::string_view s);
std::string EncodeUtf8(std::u32string_view s);
void AppendUtf8(std::string& out, char32_t c);
size_t CodePointCount(std::string_view s);

// str.isspace() for one code point.
bool IsPySpace(char32_t c);
char32_t ToUpperCp(char32_t c);
char32_t ToLowerCp(char32_t c);

std::string PyUpper(std::string_view s);
std::string PyLower(std::string_view s);
// str.capitalize(): first code point upper, the rest lower.
std::string PyCapitalize(std::string_view s);
// str.title(): upper after an uncased code point, lower after a cased one.
std::string PyTitle(std::string_view s);

// str.isupper() (upper) or str.islower(): at least one cased code point, none of the other case.
bool PyIsCaseUniform(std::string_view s, bool upper);

// str.strip/lstrip/rstrip; `chars` absent means Python whitespace.
std::string PyStrip(std::string_view s, const std::optional<std::string>& chars, bool left,
                    bool right);
// str.split / str.rsplit; `sep` absent means runs of whitespace. REQUIRES: sep, if given, is
// non-empty (callers report Python's ValueError first).
std::vector<std::string> PySplit(std::string_view s, const std::optional<std::string>& sep,
                                 int64_t max_split);
std::vector<std::string> PyRSplit(std::string_view s, const std::optional<std::string>& sep,
                                  int64_t max_split);
// str.replace(old, new, count); count < 0 means all.
std::string PyReplace(std::string_view s, std::string_view old_sub, std::string_view new_sub,
                      int64_t count);
// str.count(sub): non-overlapping occurrences, counted in code points for an empty sub.
int64_t PyCount(std::string_view s, std::string_view sub);

// float.__repr__: shortest round-trip digits, exponent form when the exponent is < -4 or >= 16.
std::string FormatPyFloat(double value);
// repr(str): quotes chosen like CPython, non-printable code points escaped.
std::string PyReprString(std::string_view s);
// A JSON string literal as Python's json.dumps writes it.
void AppendJsonString(std::string& out, std::string_view s, bool ensure_ascii);

}  // namespace ds::text::jinja
