// The progress display on stderr while a benchmark runs: on a terminal the current step is
// redrawn in place, and every finished step leaves one line with its result.
// Thread safety: all methods lock; concurrent clients may report at once.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

#include "base/status.h"
#include "bench/measurement.h"
#include "bench/target.h"

namespace ds::bench {

class Progress {
 public:
  Progress(std::string mode, int64_t total_steps);
  // Shows that a step started (terminals only).
  void Begin(const std::string& what);
  // Ends a step with its result; counts it toward the total.
  void End(const std::string& what, const std::string& result);
  // A line for work outside the counted steps (calibration).
  void Note(const std::string& what, const std::string& result);

 private:
  std::string Prefix() const;

  std::mutex mu_;
  std::string mode_;
  int64_t total_;
  int64_t done_ = 0;
  bool terminal_;
};

// "2048 prompt tokens, 0 cached, TTFT 1.23 s, prefill 1665.0 tok/s over 2048 computed, decode
// 40.1 tok/s over 128 tokens" for one measurement; "prefill not rated (1 computed, under 64)"
// below kMinPrefillTokens.
std::string Summarize(const Measurement& m);
// Summarize, or for a failed request "FAILED after 12.3 s (TTFT 0.41 s, 17 tokens streamed): "
// and the error, with whatever of that it measured.
std::string Outcome(const RequestResult& result);

}  // namespace ds::bench
