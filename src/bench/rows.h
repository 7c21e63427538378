// The columns every per-request row shares, so each mode reports a measurement the same way.
#pragma once

#include <string>
#include <vector>

#include "bench/measurement.h"
#include "bench/target.h"

namespace ds::bench {

// prompt_tokens, cached_tokens (null when the server did not report it), computed_tokens,
// ttft_s, prefill_tok_s, decode_tokens, decode_s, decode_tok_s, wall_s and
// total_tokens_per_wall_s, the last labelled as what it is.
const std::vector<std::string>& MeasurementColumns();
void AddMeasurement(const Measurement& m, Json* row);
// AddMeasurement, or for a failed request the same columns null and its error in "error".
void AddResult(const StatusOr<Measurement>& m, Json* row);

// `leading` columns, then the measurement columns, then "error".
std::vector<std::string> RowColumns(std::vector<std::string> leading);

}  // namespace ds::bench
