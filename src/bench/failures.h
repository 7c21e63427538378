// How a mode's rows failed, for its summary, its last words on stderr and its exit status. A row
// failed when its "error" is not empty; its "failed_in" names the phase ("calibration": never
// sent; "request": its own request).
// Thread safety: free functions.
#pragma once

#include <cstdint>
#include <string>

#include "bench/report.h"

namespace ds::bench {

int64_t CountFailedRows(const Report& report);

// Adds "failed_rows" and "first_failure" ({row (from 1), server, failed_in, error}; null when no
// row failed) to the summary. When no row succeeded, says so in a note ("no row succeeded:
// <first error>") on the report and on every chart, so an empty chart is never left unexplained;
// when some failed, each chart's note says how many are not drawn.
void SummarizeFailures(Report* report);

// "1 of 4 rows failed; the first, row 2 of sweep (server b, target_tokens 128, repeat 0), failed
// in its request: <error>", or "" when no row failed.
std::string FailureLine(const Report& report);

}  // namespace ds::bench
