// A small metrics registry rendered in the Prometheus text exposition format (version 0.0.4).
// Families are declared once with their help text; samples are keyed by label sets. Gauges are
// set from values owned elsewhere at render time through a callback.
// Thread safety: every method may be called concurrently.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace ds {

// Label name -> value, e.g. {{"tier", "memory"}}; rendered in name order.
using MetricLabels = std::map<std::string, std::string>;

class MetricsRegistry {
 public:
  // REQUIRES: each name declared once; names and label names are [a-zA-Z_][a-zA-Z0-9_]*.
  void DeclareCounter(const std::string& name, const std::string& help);
  void DeclareGauge(const std::string& name, const std::string& help);
  // REQUIRES: upper_bounds ascending; +Inf is implied.
  void DeclareHistogram(const std::string& name, const std::string& help,
                        std::vector<double> upper_bounds);

  // REQUIRES: the family was declared with that kind; Set also takes a counter whose value is
  // mirrored from a monotonic count kept elsewhere.
  void Add(const std::string& name, const MetricLabels& labels, double delta);
  void Set(const std::string& name, const MetricLabels& labels, double value);
  void Observe(const std::string& name, const MetricLabels& labels, double value);
  // Called at the start of each Render() to Set() gauges from their owners.
  void OnRender(std::function<void(MetricsRegistry*)> refresh);

  std::string Render();
  // The value of one counter or gauge sample, 0 when absent (tests, dashboards).
  double Value(const std::string& name, const MetricLabels& labels);

 private:
  enum class Kind { kCounter, kGauge, kHistogram };
  struct HistogramSample {
    std::vector<double> bucket_counts;  // per upper bound, not cumulative
    double count = 0;
    double sum = 0;
  };
  struct Family {
    Kind kind = Kind::kCounter;
    std::string help;
    std::vector<double> upper_bounds;
    std::map<MetricLabels, double> values;
    std::map<MetricLabels, HistogramSample> histograms;
  };
  Family& Get(const std::string& name, Kind kind);
  void Declare(const std::string& name, const std::string& help, Kind kind,
               std::vector<double> upper_bounds);

  std::mutex mu_;
  std::vector<std::string> order_;  // declaration order, for stable output
  std::map<std::string, Family> families_;
  std::vector<std::function<void(MetricsRegistry*)>> refreshers_;
};

}  // namespace ds
