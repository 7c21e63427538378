// Small text-scanning helpers shared by the output parser's files. Pure functions.
#pragma once

#include <string>
#include <string_view>

namespace ds::text::scan {

inline bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

inline size_t LeadingSpace(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && IsSpace(s[n])) ++n;
  return n;
}

inline size_t TrailingSpace(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && IsSpace(s[s.size() - 1 - n])) ++n;
  return n;
}

inline std::string_view Trim(std::string_view s) {
  s.remove_prefix(LeadingSpace(s));
  s.remove_suffix(TrailingSpace(s));
  return s;
}

// True when more input could still make `s` start with `tag` (s is shorter and a prefix).
inline bool IsProperPrefix(std::string_view s, std::string_view tag) {
  return s.size() < tag.size() && tag.substr(0, s.size()) == s;
}

// Where `tag` starts in `text`, or else where the longest suffix of `text` that is a proper prefix
// of `tag` starts (partial = true), or else npos.
struct TagMatch {
  size_t pos = std::string_view::npos;
  bool partial = false;
  bool found() const { return pos != std::string_view::npos && !partial; }
};
TagMatch FindTag(std::string_view text, std::string_view tag);

enum class Match { kYes, kNeedMore, kNo };

// Names longer than this are not names: the text is not a tag.
inline constexpr size_t kMaxNameBytes = 256;

// Matches `open` + NAME + '>' at the start of `s` (e.g. "<function=" + "read_file" + ">"), NAME
// without '<' or newline. On kYes sets *name (trimmed) and *length (bytes up to and with '>').
Match MatchNamedTag(std::string_view s, std::string_view open, std::string* name, size_t* length);

// Length of the longest prefix of `s` that does not end inside a UTF-8 character.
size_t CompleteUtf8Prefix(std::string_view s);

}  // namespace ds::text::scan
