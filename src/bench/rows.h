// The columns every per-request row shares, so each mode reports a measurement the same way.
#pragma once

#include <string>
#include <vector>

#include "bench/measurement.h"
#include "bench/report.h"
#include "bench/target.h"

namespace ds::bench {

// prompt_tokens, cached_tokens (null when the server did not report it), computed_tokens,
// ttft_s, prefill_tok_s, decode_tokens, decode_s, decode_tok_s, wall_s and
// total_tokens_per_wall_s, the last labelled as what it is. What was not measured is null.
const std::vector<std::string>& MeasurementColumns();
void AddMeasurement(const Measurement& m, Json* row);
// AddMeasurement, and for a failed request "failed_in" = "request" and its error in "error"
// (both "" when it succeeded). A failed request keeps what it measured before failing; its rates
// are never drawn in charts.
void AddResult(const RequestResult& result, Json* row);
// A row failed before its request was sent: every measurement column null, "failed_in" names
// the phase that failed (e.g. "calibration").
void MarkNotSent(const std::string& phase, const std::string& error, Json* row);

// A footnote on the report when a row that succeeded has no prefill rate because it computed
// fewer than kMinPrefillTokens prompt tokens, so a blank is not read as a failure.
void NoteUnratedPrefill(Report* report);

// `leading` columns, then the measurement columns, then "failed_in" and "error".
std::vector<std::string> RowColumns(std::vector<std::string> leading);

}  // namespace ds::bench
