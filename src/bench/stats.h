// Order statistics for per-request figures.
#pragma once

#include <vector>

namespace ds::bench {

// The p-th percentile (0..100, linear between ranks) of `values`; -1 when empty.
double Percentile(std::vector<double> values, double p);
// The mean of `values`; -1 when empty.
double Mean(const std::vector<double>& values);

}  // namespace ds::bench
