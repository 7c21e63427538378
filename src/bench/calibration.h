// Calibration: a server's tokenizer is unknown to the client, so two short prompts (one
// generated token each) measured against the prompt tokens the server reports turn a target token
// count into a word count. They also warm the server. A server that cannot be calibrated is sent
// none of its rows, since their prompt sizes would be guesses; the rows are marked failed in
// calibration and the other server, if any, goes on.
// Thread safety: plain values and free functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "bench/progress.h"
#include "bench/prompt_text.h"
#include "bench/target.h"

namespace ds::bench {

// prompt tokens ~= intercept + slope * words, for one server and API.
struct TokenScale {
  double intercept = 0;
  double slope = 1;
  int64_t WordsFor(int64_t prompt_tokens) const;
};

// What calibrating one server found: its scale, or the error that stopped calibration, and what
// each probe sent measured (a failed one included).
struct Calibration {
  TokenScale scale;
  Status status;
  std::vector<RequestResult> probes;
  bool ok() const { return status.ok(); }
};

Calibration Calibrate(const Target& target, PromptText* text);

// Calibrate for each target, by label, each outcome shown on `progress`.
using Calibrations = std::map<std::string, Calibration>;
Calibrations CalibrateAll(const std::vector<Target>& targets, PromptText* text, Progress* progress);

// Per server: the scale found (null when none) and each probe's words, measurement and error.
Json CalibrationSummary(const Calibrations& calibrations);

// "calibration failed: <why>": the error of every row of a server that could not be calibrated.
std::string UncalibratedError(const Calibration& calibration);
// For a row of such a server: every measurement column null, failed in "calibration" with that
// error. Returns the progress line's outcome.
std::string AddUncalibrated(const Calibration& calibration, Json* row);

}  // namespace ds::bench
