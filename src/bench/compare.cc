// compare: each context size cold (a prompt no cache has seen), then warm (the same request
// again), to show what the server's prompt cache saves.

#include "bench/calibration.h"
#include "bench/modes.h"
#include "bench/progress.h"
#include "bench/prompt_text.h"
#include "bench/rows.h"

namespace ds::bench {
namespace {

Chart CompareChart(const std::vector<Target>& targets, const std::vector<Json>& rows) {
  Chart chart{"compare-prefill", "Prefill time with the cache on vs off", "prompt tokens",
              /*log2_x=*/true, {Panel{"time to first token, s", {}}}};
  for (const Target& t : targets) {
    std::vector<Json> cold, warm;
    for (const Json& row : rows) (row["run"] == "cold" ? cold : warm).push_back(row);
    chart.panels[0].series.push_back(ColumnSeries(
        cold, t.label, "prompt_tokens", "ttft_s", "cache off: cold prompt, " + t.label));
    chart.panels[0].series.push_back(ColumnSeries(
        warm, t.label, "prompt_tokens", "ttft_s", "cache on: repeated prompt, " + t.label));
  }
  return chart;
}

}  // namespace

StatusOr<Report> RunCompare(const std::vector<Target>& targets, const CompareOptions& options) {
  Report report;
  report.mode = "compare";
  report.columns = RowColumns({"server", "target_tokens", "run", "ttft_speedup"});
  report.key_columns = {"target_tokens", "run"};
  report.ratio_columns = {"ttft_s", "prefill_tok_s", "cached_tokens"};
  Progress progress("compare", static_cast<int64_t>(options.sizes.size() * targets.size() * 2));
  PromptText text;
  Calibrations calibrations = CalibrateAll(targets, &text, &progress);
  for (int64_t size : options.sizes) {
    for (const Target& t : targets) {
      const Calibration& calibration = calibrations[t.label];
      std::string prompt = text.Make(calibration.scale.WordsFor(size));
      double cold_ttft = -1;
      for (const char* run : {"cold", "warm"}) {
        std::string what = std::to_string(size) + " tokens " + run + " on " + t.label;
        Json row = {{"server", t.label}, {"target_tokens", size}, {"run", run},
                    {"ttft_speedup", Json()}};
        if (!calibration.ok()) {
          progress.End(what, AddUncalibrated(calibration, &row));
          report.rows.push_back(std::move(row));
          continue;
        }
        progress.Begin(what);
        RequestResult m = MeasurePrompt(t, prompt, options.decode_tokens);
        AddResult(m, &row);
        progress.End(what, Outcome(m));
        if (m.ok() && std::string(run) == "cold") {
          cold_ttft = m.measurement.ttft_s();
        } else if (m.ok() && cold_ttft > 0 && m.measurement.ttft_s() > 0) {
          row["ttft_speedup"] = cold_ttft / m.measurement.ttft_s();
        }
        report.rows.push_back(std::move(row));
      }
    }
  }
  report.summary = {{"decode_tokens_requested", options.decode_tokens},
                    {"calibration", CalibrationSummary(calibrations)}};
  report.charts = {CompareChart(targets, report.rows)};
  return report;
}

}  // namespace ds::bench
