#include "bench/sse_parser.h"

namespace ds::bench {

std::vector<SseEvent> SseParser::Feed(std::string_view bytes) {
  std::vector<SseEvent> done;
  partial_line_.append(bytes);
  size_t start = 0;
  for (size_t nl; (nl = partial_line_.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string_view line(partial_line_.data() + start, nl - start);
    if (line.ends_with('\r')) line.remove_suffix(1);
    TakeLine(line, &done);
  }
  partial_line_.erase(0, start);
  return done;
}

void SseParser::TakeLine(std::string_view line, std::vector<SseEvent>* done) {
  if (line.empty()) {
    if (has_data_) done->push_back(std::move(current_));
    current_ = SseEvent();
    has_data_ = false;
    return;
  }
  if (line.front() == ':') return;  // a comment (keep-alive)
  size_t colon = line.find(':');
  std::string_view field = line.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
  if (value.starts_with(' ')) value.remove_prefix(1);
  if (field == "event") {
    current_.event = std::string(value);
  } else if (field == "data") {
    if (has_data_) current_.data += '\n';
    current_.data.append(value);
    has_data_ = true;
  }
}

}  // namespace ds::bench
