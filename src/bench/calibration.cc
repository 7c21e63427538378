#include "bench/calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "bench/rows.h"

namespace ds::bench {
namespace {

// Whole passes over the word list, so the probes' token counts do not depend on the draw.
constexpr int64_t kShortProbeWords = 64;
constexpr int64_t kLongProbeWords = 320;
static_assert(kShortProbeWords % PromptText::kWordListSize == 0 &&
              kLongProbeWords % PromptText::kWordListSize == 0);
constexpr int64_t kProbeWords[] = {kShortProbeWords, kLongProbeWords};

}  // namespace

int64_t TokenScale::WordsFor(int64_t prompt_tokens) const {
  return std::max<int64_t>(1, std::llround((prompt_tokens - intercept) / slope));
}

Calibration Calibrate(const Target& target, PromptText* text) {
  Calibration c;
  for (int64_t words : kProbeWords) {
    c.probes.push_back(MeasurePrompt(target, text->Make(words), 1));
    if (!c.probes.back().ok()) {
      c.status = c.probes.back().status;
      return c;
    }
  }
  const int64_t short_tokens = c.probes[0].measurement.prompt_tokens;
  const int64_t long_tokens = c.probes[1].measurement.prompt_tokens;
  c.scale.slope =
      static_cast<double>(long_tokens - short_tokens) / (kLongProbeWords - kShortProbeWords);
  if (!(c.scale.slope > 0)) {
    c.status = DataLossError(target.url.text + ": prompt token counts did not grow with the " +
                             "prompt (" + std::to_string(short_tokens) + " then " +
                             std::to_string(long_tokens) + ")");
    return c;
  }
  c.scale.intercept = short_tokens - c.scale.slope * kShortProbeWords;
  return c;
}

Calibrations CalibrateAll(const std::vector<Target>& targets, PromptText* text,
                          Progress* progress) {
  Calibrations calibrations;
  for (const Target& t : targets) {
    std::string what = "calibration on " + t.label;
    progress->Begin(what);
    Calibration c = Calibrate(t, text);
    std::string outcome;
    if (c.ok()) {
      char buf[64];
      std::snprintf(buf, sizeof(buf), "%.3f prompt tokens per word", c.scale.slope);
      outcome = buf;
    } else {
      outcome = "FAILED, none of its rows will be sent: " + c.status.message();
    }
    progress->Note(what, outcome);
    calibrations[t.label] = std::move(c);
  }
  return calibrations;
}

Json CalibrationSummary(const Calibrations& calibrations) {
  Json summary = Json::object();
  for (const auto& [label, c] : calibrations) {
    Json probes = Json::array();
    for (size_t i = 0; i < c.probes.size(); ++i) {
      Json probe = {{"words", kProbeWords[i]}};
      AddResult(c.probes[i], &probe);
      probes.push_back(std::move(probe));
    }
    summary[label] = {{"prompt_tokens_per_word", c.ok() ? Json(c.scale.slope) : Json()},
                      {"intercept_tokens", c.ok() ? Json(c.scale.intercept) : Json()},
                      {"error", c.ok() ? "" : c.status.message()},
                      {"probes", probes}};
  }
  return summary;
}

std::string UncalibratedError(const Calibration& calibration) {
  return "calibration failed: " + calibration.status.message();
}

std::string AddUncalibrated(const Calibration& calibration, Json* row) {
  std::string error = UncalibratedError(calibration);
  MarkNotSent("calibration", error, row);
  return "FAILED, not sent: " + error;
}

}  // namespace ds::bench
