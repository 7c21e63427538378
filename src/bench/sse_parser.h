// Splits a server-sent event stream into events, whatever the network chunk boundaries are.
// Thread safety: one parser per stream.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ds::bench {

struct SseEvent {
  std::string event;  // the `event:` name, "" when unnamed
  std::string data;   // the `data:` lines joined by '\n'
};

class SseParser {
 public:
  // Returns the events completed by `bytes` (a blank line ends an event; \n or \r\n).
  std::vector<SseEvent> Feed(std::string_view bytes);

 private:
  void TakeLine(std::string_view line, std::vector<SseEvent>* done);

  std::string partial_line_;
  SseEvent current_;
  bool has_data_ = false;
};

}  // namespace ds::bench
