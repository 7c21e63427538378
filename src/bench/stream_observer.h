// Reads the events of one streamed response of any of the APIs the benchmark drives (OpenAI
// chat completions and completions, Anthropic messages) into a Measurement: when generated text
// arrived, and the token counts the server reported in its usage or timings (deltaserve's and
// llama-server's field names both).
// Thread safety: one observer per stream.
#pragma once

#include <string>

#include "base/status.h"
#include "bench/measurement.h"
#include "bench/sse_parser.h"

namespace ds::bench {

class StreamObserver {
 public:
  // `t_s`: seconds since the request was sent.
  void OnEvent(const SseEvent& event, double t_s);
  // OK, or the error the server streamed (an error event or a payload that is not JSON).
  const Status& status() const { return status_; }
  Measurement Finish(double wall_s);

 private:
  Measurement m_;
  Status status_;
};

}  // namespace ds::bench
