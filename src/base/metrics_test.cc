#include "base/metrics.h"

#include <gtest/gtest.h>

namespace ds {
namespace {

TEST(MetricsTest, RendersCountersGaugesAndCumulativeHistograms) {
  MetricsRegistry registry;
  registry.DeclareCounter("ds_requests_total", "Requests served.");
  registry.DeclareGauge("ds_cache_bytes", "Bytes held.\nBy tier.");
  registry.DeclareHistogram("ds_ttft_seconds", "Time to first token.", {0.1, 1});
  registry.Add("ds_requests_total", {{"api", "chat"}}, 1);
  registry.Add("ds_requests_total", {{"api", "chat"}}, 2);
  registry.Add("ds_requests_total", {{"api", "say \"hi\"\\"}}, 1);
  int refreshes = 0;
  registry.OnRender([&](MetricsRegistry* r) {
    ++refreshes;
    r->Set("ds_cache_bytes", {{"tier", "memory"}}, 1536);
  });
  registry.Observe("ds_ttft_seconds", {}, 0.05);
  registry.Observe("ds_ttft_seconds", {}, 0.5);
  registry.Observe("ds_ttft_seconds", {}, 7);
  EXPECT_EQ(registry.Render(),
            "# HELP ds_requests_total Requests served.\n"
            "# TYPE ds_requests_total counter\n"
            "ds_requests_total{api=\"chat\"} 3\n"
            "ds_requests_total{api=\"say \\\"hi\\\"\\\\\"} 1\n"
            "# HELP ds_cache_bytes Bytes held.\\nBy tier.\n"
            "# TYPE ds_cache_bytes gauge\n"
            "ds_cache_bytes{tier=\"memory\"} 1536\n"
            "# HELP ds_ttft_seconds Time to first token.\n"
            "# TYPE ds_ttft_seconds histogram\n"
            "ds_ttft_seconds_bucket{le=\"0.1\"} 1\n"
            "ds_ttft_seconds_bucket{le=\"1\"} 2\n"
            "ds_ttft_seconds_bucket{le=\"+Inf\"} 3\n"
            "ds_ttft_seconds_sum 7.55\n"
            "ds_ttft_seconds_count 3\n");
  EXPECT_EQ(refreshes, 1);
  EXPECT_EQ(registry.Value("ds_requests_total", {{"api", "chat"}}), 3);
  EXPECT_EQ(registry.Value("ds_requests_total", {{"api", "none"}}), 0);
}

}  // namespace
}  // namespace ds
