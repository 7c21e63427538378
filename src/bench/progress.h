// The progress display on stderr while a benchmark runs: every finished step leaves one line with
// its result. The running step shows its elapsed time, so a request that takes minutes (a long
// cold prefill) is not silence: on a terminal its line is redrawn in place every second; in a
// log, a "still running" line comes every minute.
// Thread safety: all methods lock; concurrent clients may report at once. A clock thread owned
// by the Progress draws the elapsed time; the destructor stops it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "base/status.h"
#include "bench/measurement.h"
#include "bench/target.h"

namespace ds::bench {

// REQUIRES: both intervals > 0 and `write` set.
struct ProgressOptions {
  bool terminal = false;  // redraw the running step in place
  double redraw_s = 1;    // terminal: how often the running step's clock is redrawn
  double log_every_s = 60;  // not a terminal: how often a running step says it still runs
  std::function<void(const std::string&)> write;  // takes each piece of output
};

// Draws on stderr, as a terminal when it is one.
ProgressOptions StderrProgress();

class Progress {
 public:
  Progress(std::string mode, int64_t total_steps, ProgressOptions options = StderrProgress());
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Starts a step's clock; it runs until End or Note names the same step or another begins.
  void Begin(const std::string& what);
  // Ends a step with its result; counts it toward the total.
  void End(const std::string& what, const std::string& result);
  // A line for work outside the counted steps (calibration).
  void Note(const std::string& what, const std::string& result);

 private:
  using Clock = std::chrono::steady_clock;

  std::string Prefix() const;
  // Ends the running step if it is `what`. REQUIRES: mu_ held.
  void Stop(const std::string& what);
  // The clock thread: draws the running step's elapsed time at each interval.
  void Tick();

  const std::string mode_;
  const int64_t total_;
  const ProgressOptions options_;
  std::mutex mu_;
  std::condition_variable changed_;
  int64_t done_ = 0;
  std::string running_;  // "" when no step runs
  Clock::time_point running_since_;
  bool stopping_ = false;
  std::thread clock_;  // last: starts after the members it reads
};

// "12 s", "2 min 05 s": a running step's clock.
std::string ElapsedText(double seconds);

// One measurement on a line: prompt tokens, cached, TTFT, the prefill rate over the computed
// tokens ("prefill not rated" below kMinPrefillTokens), the decode rate and the total time.
std::string Summarize(const Measurement& m);
// Summarize, or for a failed request "FAILED after 12.3 s (TTFT 0.41 s, 17 tokens streamed): "
// and the error, with whatever of that it measured.
std::string Outcome(const RequestResult& result);

}  // namespace ds::bench
