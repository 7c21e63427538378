#include "bench/stats.h"

#include <algorithm>
#include <numeric>

namespace ds::bench {

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return -1;
  std::sort(values.begin(), values.end());
  double rank = std::clamp(p, 0.0, 100.0) / 100 * (values.size() - 1);
  size_t below = static_cast<size_t>(rank);
  size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (values[above] - values[below]) * (rank - below);
}

double Mean(const std::vector<double>& values) {
  if (values.empty()) return -1;
  return std::accumulate(values.begin(), values.end(), 0.0) / values.size();
}

}  // namespace ds::bench
