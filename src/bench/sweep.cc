// sweep: prefill and decode rates at each context size, with prompts no cache has seen.
#include "bench/calibration.h"
#include "bench/modes.h"
#include "bench/progress.h"
#include "bench/prompt_text.h"
#include "bench/rows.h"

namespace ds::bench {
namespace {

std::vector<Chart> SweepCharts(const std::vector<Target>& targets, const std::vector<Json>& rows) {
  Chart throughput{"sweep-throughput", "Prefill and decode throughput vs context",
                   "prompt tokens", /*log2_x=*/true,
                   {Panel{"prefill tok/s (computed tokens / TTFT)", {}},
                    Panel{"decode tok/s (token arrival times)", {}}}};
  Chart versus{"sweep-decode-vs-wall", "Decode rate vs total tokens over wall time",
               "prompt tokens", /*log2_x=*/true, {Panel{"tok/s", {}}}};
  for (const Target& t : targets) {
    throughput.panels[0].series.push_back(
        ColumnSeries(rows, t.label, "prompt_tokens", "prefill_tok_s", t.label));
    throughput.panels[1].series.push_back(
        ColumnSeries(rows, t.label, "prompt_tokens", "decode_tok_s", t.label));
    versus.panels[0].series.push_back(ColumnSeries(rows, t.label, "prompt_tokens", "decode_tok_s",
                                                   "decode tok/s, " + t.label));
    versus.panels[0].series.push_back(ColumnSeries(rows, t.label, "prompt_tokens",
                                                   "total_tokens_per_wall_s",
                                                   "total tokens / wall s, " + t.label));
  }
  return {throughput, versus};
}

}  // namespace

StatusOr<Report> RunSweep(const std::vector<Target>& targets, const SweepOptions& options) {
  Report report;
  report.mode = "sweep";
  report.columns = RowColumns({"server", "target_tokens", "repeat"});
  report.key_columns = {"target_tokens", "repeat"};
  report.ratio_columns = {"ttft_s", "prefill_tok_s", "decode_tok_s"};
  Progress progress("sweep", static_cast<int64_t>(options.sizes.size() * options.repeats *
                                                  targets.size()));
  PromptText text;
  Calibrations calibrations = CalibrateAll(targets, &text, &progress);
  for (int64_t size : options.sizes) {
    for (int repeat = 0; repeat < options.repeats; ++repeat) {
      for (const Target& t : targets) {
        std::string what = std::to_string(size) + " tokens on " + t.label;
        Json row = {{"server", t.label}, {"target_tokens", size}, {"repeat", repeat}};
        const Calibration& calibration = calibrations[t.label];
        if (!calibration.ok()) {
          progress.End(what, AddUncalibrated(calibration, &row));
        } else {
          progress.Begin(what);
          RequestResult m = MeasurePrompt(t, text.Make(calibration.scale.WordsFor(size)),
                                          options.decode_tokens);
          AddResult(m, &row);
          progress.End(what, Outcome(m));
        }
        report.rows.push_back(std::move(row));
      }
    }
  }
  report.summary = {{"decode_tokens_requested", options.decode_tokens},
                    {"repeats", options.repeats},
                    {"calibration", CalibrationSummary(calibrations)}};
  report.charts = SweepCharts(targets, report.rows);
  return report;
}

}  // namespace ds::bench
