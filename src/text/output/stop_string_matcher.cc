#include "text/output/stop_string_matcher.h"

#include <algorithm>

#include "base/check.h"
#include "text/output/scan_util.h"

namespace ds::text {

StopStringMatcher::StopStringMatcher(std::vector<std::string> stop_strings) {
  for (std::string& s : stop_strings) {
    if (!s.empty()) stop_strings_.push_back(std::move(s));
  }
}

StopStringMatcher::Result StopStringMatcher::Push(std::string_view piece) {
  Result result;
  if (stopped()) {
    result.stopped = true;
    return result;
  }
  held_.append(piece);
  // Only matches that end inside the new piece are possible: held_ had none before.
  size_t best_end = std::string::npos;
  size_t best_start = std::string::npos;
  for (size_t i = 0; i < stop_strings_.size(); ++i) {
    const size_t start = held_.find(stop_strings_[i]);
    if (start == std::string::npos) continue;
    const size_t end = start + stop_strings_[i].size();
    if (end < best_end || (end == best_end && start < best_start)) {
      best_end = end;
      best_start = start;
      stopped_index_ = static_cast<int>(i);
    }
  }
  if (stopped()) {
    result.text = held_.substr(0, best_start);
    result.stopped = true;
    held_.clear();
    return result;
  }
  size_t keep_from = held_.size();
  for (const std::string& s : stop_strings_) {
    const scan::TagMatch m = scan::FindTag(held_, s);
    if (m.partial) keep_from = std::min(keep_from, m.pos);
  }
  result.text = held_.substr(0, keep_from);
  held_.erase(0, keep_from);
  return result;
}

std::string StopStringMatcher::Flush() {
  std::string rest;
  rest.swap(held_);
  return rest;
}

const std::string& StopStringMatcher::matched_stop_string() const {
  DS_CHECK(stopped());
  return stop_strings_[static_cast<size_t>(stopped_index_)];
}

}  // namespace ds::text
