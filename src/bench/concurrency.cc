// concurrency: N clients at once, each sending unique prompts one after another; per level the
// per-request rates beside what all clients together got over the wall time.
#include <chrono>
#include <mutex>
#include <thread>

#include "bench/calibration.h"
#include "bench/modes.h"
#include "bench/progress.h"
#include "bench/prompt_text.h"
#include "bench/rows.h"
#include "bench/stats.h"

namespace ds::bench {
namespace {

struct LevelResult {
  std::vector<Measurement> done;
  std::vector<std::string> errors;
  double wall_s = 0;
  std::string failed_in;  // "" when every request succeeded
};

// A level on a server that could not be calibrated: every request it would have sent failed.
LevelResult Uncalibrated(const Calibration& calibration, int64_t clients,
                         const ConcurrencyOptions& options, const std::string& what,
                         Progress* progress) {
  LevelResult result;
  result.errors.assign(clients * options.requests_per_client, UncalibratedError(calibration));
  result.failed_in = "calibration";
  result.wall_s = -1;  // nothing ran
  for (const std::string& error : result.errors) progress->End(what, "FAILED, not sent: " + error);
  return result;
}

LevelResult RunLevel(const Target& target, const TokenScale& scale, int64_t clients,
                     const ConcurrencyOptions& options, Progress* progress) {
  LevelResult result;
  std::mutex mu;
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int64_t c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      PromptText text;
      for (int64_t r = 0; r < options.requests_per_client; ++r) {
        std::string what = std::to_string(clients) + " clients on " + target.label + ", client " +
                           std::to_string(c) + " request " + std::to_string(r);
        RequestResult m = MeasurePrompt(target, text.Make(scale.WordsFor(options.prompt_tokens)),
                                        options.decode_tokens);
        std::lock_guard lock(mu);
        if (m.ok()) {
          result.done.push_back(m.measurement);
        } else {
          result.errors.push_back(m.status.message());
        }
        progress->End(what, Outcome(m));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  if (!result.errors.empty()) result.failed_in = "request";
  result.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

Json LevelRow(const Target& target, int64_t clients, const LevelResult& level) {
  std::vector<double> ttft, decode;
  int64_t generated = 0, prompt = 0, computed = 0;
  for (const Measurement& m : level.done) {
    if (m.ttft_s() >= 0) ttft.push_back(m.ttft_s());
    if (m.decode_tokens_per_s() >= 0) decode.push_back(m.decode_tokens_per_s());
    generated += m.decode_tokens();
    prompt += m.prompt_tokens;
    computed += m.computed_tokens();
  }
  double wall = level.wall_s;
  return {{"server", target.label},
          {"clients", clients},
          {"requests", level.done.size()},
          {"failed", level.errors.size()},
          {"prompt_tokens", prompt},
          {"computed_tokens", computed},
          {"generated_tokens", generated},
          {"ttft_p50_s", Known(Percentile(ttft, 50))},
          {"ttft_p95_s", Known(Percentile(ttft, 95))},
          {"decode_tok_s_per_request", Known(Mean(decode))},
          {"generated_tokens_per_wall_s", wall > 0 ? Json(generated / wall) : Json()},
          {"total_tokens_per_wall_s", wall > 0 ? Json((prompt + generated) / wall) : Json()},
          {"wall_s", Known(wall)},
          {"failed_in", level.failed_in},
          {"error", level.errors.empty() ? "" : level.errors.front()}};
}

}  // namespace

StatusOr<Report> RunConcurrency(const std::vector<Target>& targets,
                                const ConcurrencyOptions& options) {
  Report report;
  report.mode = "concurrency";
  report.columns = {"server",        "clients",         "requests",
                    "failed",        "prompt_tokens",   "computed_tokens",
                    "generated_tokens", "ttft_p50_s",   "ttft_p95_s",
                    "decode_tok_s_per_request", "generated_tokens_per_wall_s",
                    "total_tokens_per_wall_s",  "wall_s", "failed_in", "error"};
  report.key_columns = {"clients"};
  report.ratio_columns = {"ttft_p50_s", "decode_tok_s_per_request",
                          "generated_tokens_per_wall_s"};
  int64_t total = 0;
  for (int64_t clients : options.clients) total += clients * options.requests_per_client;
  Progress progress("concurrency", total * static_cast<int64_t>(targets.size()));
  PromptText text;
  Calibrations calibrations = CalibrateAll(targets, &text, &progress);
  for (int64_t clients : options.clients) {
    for (const Target& t : targets) {
      const Calibration& calibration = calibrations[t.label];
      const std::string what = std::to_string(clients) + " clients on " + t.label;
      progress.Begin(what);
      LevelResult level = calibration.ok()
                              ? RunLevel(t, calibration.scale, clients, options, &progress)
                              : Uncalibrated(calibration, clients, options, what, &progress);
      report.rows.push_back(LevelRow(t, clients, level));
    }
  }
  Chart chart{"concurrency-throughput", "Decode rate vs throughput over wall time", "clients",
              false, {Panel{"tok/s", {}}}};
  for (const Target& t : targets) {
    chart.panels[0].series.push_back(ColumnSeries(report.rows, t.label, "clients",
                                                  "decode_tok_s_per_request",
                                                  "decode tok/s per request, " + t.label));
    chart.panels[0].series.push_back(
        ColumnSeries(report.rows, t.label, "clients", "generated_tokens_per_wall_s",
                     "generated tokens / wall s, all clients, " + t.label));
    chart.panels[0].series.push_back(ColumnSeries(report.rows, t.label, "clients",
                                                  "total_tokens_per_wall_s",
                                                  "total tokens / wall s, " + t.label));
  }
  report.summary = {{"requests_per_client", options.requests_per_client},
                    {"target_prompt_tokens", options.prompt_tokens},
                    {"decode_tokens_requested", options.decode_tokens},
                    {"calibration", CalibrationSummary(calibrations)}};
  report.charts = {chart};
  return report;
}

}  // namespace ds::bench
