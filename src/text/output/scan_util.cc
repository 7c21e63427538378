#include "text/output/scan_util.h"

#include <algorithm>

namespace ds::text::scan {

TagMatch FindTag(std::string_view text, std::string_view tag) {
  TagMatch match;
  match.pos = text.find(tag);
  if (match.pos != std::string_view::npos) return match;
  for (size_t len = std::min(tag.size() - 1, text.size()); len > 0; --len) {
    if (text.substr(text.size() - len) == tag.substr(0, len)) {
      match.pos = text.size() - len;
      match.partial = true;
      return match;
    }
  }
  return match;
}

Match MatchNamedTag(std::string_view s, std::string_view open, std::string* name, size_t* length) {
  if (s.size() < open.size()) return IsProperPrefix(s, open) ? Match::kNeedMore : Match::kNo;
  if (s.substr(0, open.size()) != open) return Match::kNo;
  const size_t gt = s.find('>', open.size());
  const std::string_view body =
      s.substr(open.size(), (gt == std::string_view::npos ? s.size() : gt) - open.size());
  if (body.find_first_of("<\n") != std::string_view::npos || body.size() > kMaxNameBytes) {
    return Match::kNo;
  }
  if (gt == std::string_view::npos) return Match::kNeedMore;
  const std::string_view trimmed = Trim(body);
  if (trimmed.empty()) return Match::kNo;
  *name = std::string(trimmed);
  *length = gt + 1;
  return Match::kYes;
}

size_t CompleteUtf8Prefix(std::string_view s) {
  const size_t size = s.size();
  for (size_t back = 1; back <= 4 && back <= size; ++back) {
    const auto c = static_cast<unsigned char>(s[size - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: look further back for the lead
    const size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return back >= need ? size : size - back;
  }
  return size;  // only continuation bytes: invalid input, passed through
}

}  // namespace ds::text::scan
