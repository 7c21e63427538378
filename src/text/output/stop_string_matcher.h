// StopStringMatcher: finds the request's stop strings in detokenized text that arrives in pieces.
// Text is released as soon as no stop string can start in it; the longest suffix that is a
// proper prefix of some stop string is held back until the next piece decides it. The first stop
// string to complete in the stream wins (the earliest end; among those ending at the same byte,
// the one starting earliest, i.e. the longest); the text before it is released, it and everything
// after it never are. The result does not depend on how the stream is split into pieces.
// Thread safety: one instance per stream.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ds::text {

class StopStringMatcher {
 public:
  // Empty stop strings are ignored.
  explicit StopStringMatcher(std::vector<std::string> stop_strings);

  struct Result {
    std::string text;      // safe to emit now
    bool stopped = false;  // a stop string was completed; generation should end
  };
  // After a stop, returns an empty, stopped result.
  Result Push(std::string_view piece);
  // End of the stream: returns the held-back text (no stop string can complete any more).
  std::string Flush();

  bool stopped() const { return stopped_index_ >= 0; }
  // The stop string that was hit. REQUIRES: stopped().
  const std::string& matched_stop_string() const;

 private:
  std::vector<std::string> stop_strings_;
  std::string held_;
  int stopped_index_ = -1;
};

}  // namespace ds::text
