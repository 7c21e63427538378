#include "base/metrics.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "base/check.h"

namespace ds {
namespace {

std::string FormatNumber(double value) {
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (std::isnan(value)) return "NaN";
  // The shortest form that reads back as the same double.
  char buf[32];
  for (int precision = 15; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  return buf;
}

// The exposition format escapes backslash and newline in help text, and also '"' in label values.
std::string Escape(const std::string& text, bool quotes) {
  std::string out;
  for (char c : text) {
    if (c == '\\' || (quotes && c == '"')) {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string LabelText(const MetricLabels& labels,
                      const std::pair<std::string, std::string>* extra = nullptr) {
  if (labels.empty() && extra == nullptr) return "";
  std::string out = "{";
  bool first = true;
  auto append = [&](const std::string& key, const std::string& value) {
    if (!first) out += ",";
    first = false;
    out += key + "=\"" + Escape(value, /*quotes=*/true) + "\"";
  };
  for (const auto& [key, value] : labels) append(key, value);
  if (extra != nullptr) append(extra->first, extra->second);
  return out + "}";
}

}  // namespace

void MetricsRegistry::Declare(const std::string& name, const std::string& help, Kind kind,
                              std::vector<double> upper_bounds) {
  std::lock_guard<std::mutex> lock(mu_);
  DS_CHECK_MSG(!families_.contains(name), "metric declared twice");
  Family& family = families_[name];
  family.kind = kind;
  family.help = help;
  family.upper_bounds = std::move(upper_bounds);
  order_.push_back(name);
}

void MetricsRegistry::DeclareCounter(const std::string& name, const std::string& help) {
  Declare(name, help, Kind::kCounter, {});
}

void MetricsRegistry::DeclareGauge(const std::string& name, const std::string& help) {
  Declare(name, help, Kind::kGauge, {});
}

void MetricsRegistry::DeclareHistogram(const std::string& name, const std::string& help,
                                       std::vector<double> upper_bounds) {
  Declare(name, help, Kind::kHistogram, std::move(upper_bounds));
}

MetricsRegistry::Family& MetricsRegistry::Get(const std::string& name, Kind kind) {
  auto it = families_.find(name);
  DS_CHECK_MSG(it != families_.end() && it->second.kind == kind, "undeclared metric");
  return it->second;
}

void MetricsRegistry::Add(const std::string& name, const MetricLabels& labels, double delta) {
  std::lock_guard<std::mutex> lock(mu_);
  Get(name, Kind::kCounter).values[labels] += delta;
}

void MetricsRegistry::Set(const std::string& name, const MetricLabels& labels, double value) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = families_.find(name);
  DS_CHECK_MSG(it != families_.end() && it->second.kind != Kind::kHistogram, "undeclared metric");
  it->second.values[labels] = value;
}

void MetricsRegistry::Observe(const std::string& name, const MetricLabels& labels, double value) {
  std::lock_guard<std::mutex> lock(mu_);
  Family& family = Get(name, Kind::kHistogram);
  HistogramSample& sample = family.histograms[labels];
  sample.bucket_counts.resize(family.upper_bounds.size());
  for (size_t i = 0; i < family.upper_bounds.size(); ++i) {
    if (value <= family.upper_bounds[i]) {
      sample.bucket_counts[i] += 1;
      break;
    }
  }
  sample.count += 1;
  sample.sum += value;
}

void MetricsRegistry::OnRender(std::function<void(MetricsRegistry*)> refresh) {
  std::lock_guard<std::mutex> lock(mu_);
  refreshers_.push_back(std::move(refresh));
}

double MetricsRegistry::Value(const std::string& name, const MetricLabels& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = families_.find(name);
  if (it == families_.end()) return 0;
  auto value = it->second.values.find(labels);
  return value == it->second.values.end() ? 0 : value->second;
}

std::string MetricsRegistry::Render() {
  std::vector<std::function<void(MetricsRegistry*)>> refreshers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    refreshers = refreshers_;
  }
  for (auto& refresh : refreshers) refresh(this);
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const std::string& name : order_) {
    const Family& family = families_.at(name);
    const char* type = family.kind == Kind::kCounter ? "counter"
                       : family.kind == Kind::kGauge ? "gauge"
                                                     : "histogram";
    out += "# HELP " + name + " " + Escape(family.help, /*quotes=*/false) + "\n";
    out += "# TYPE " + name + " " + type + "\n";
    for (const auto& [labels, value] : family.values) {
      out += name + LabelText(labels) + " " + FormatNumber(value) + "\n";
    }
    for (const auto& [labels, sample] : family.histograms) {
      double cumulative = 0;
      for (size_t i = 0; i < family.upper_bounds.size(); ++i) {
        cumulative += sample.bucket_counts[i];
        const std::pair<std::string, std::string> le{"le", FormatNumber(family.upper_bounds[i])};
        out += name + "_bucket" + LabelText(labels, &le) + " " + FormatNumber(cumulative) + "\n";
      }
      const std::pair<std::string, std::string> inf{"le", "+Inf"};
      out += name + "_bucket" + LabelText(labels, &inf) + " " + FormatNumber(sample.count) + "\n";
      out += name + "_sum" + LabelText(labels) + " " + FormatNumber(sample.sum) + "\n";
      out += name + "_count" + LabelText(labels) + " " + FormatNumber(sample.count) + "\n";
    }
  }
  return out;
}

}  // namespace ds
