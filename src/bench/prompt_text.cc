#include "bench/prompt_text.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string_view>

namespace ds::bench {
namespace {

constexpr std::array<std::string_view, 64> kWords = {
    "river",  "stone",   "garden", "window", "silver", "morning", "quiet",  "market",
    "bridge", "candle",  "forest", "letter", "yellow", "harbor",  "planet", "winter",
    "copper", "meadow",  "signal", "travel", "orange", "pocket",  "thunder", "velvet",
    "anchor", "library", "motion", "pepper", "castle", "engine",  "island", "ladder",
    "number", "paper",   "rocket", "shadow", "ticket", "valley",  "wonder", "basket",
    "circle", "dragon",  "feather", "guitar", "hollow", "jacket", "kettle", "lantern",
    "marble", "needle",  "object", "puzzle", "rabbit", "saddle",  "tunnel", "umbrella",
    "violet", "walnut",  "zipper", "button", "cotton", "desert",  "falcon", "glacier"};

// Whole passes over the word list, so the probes' token counts do not depend on the draw.
constexpr int64_t kShortProbeWords = 64;
constexpr int64_t kLongProbeWords = 320;
static_assert(kShortProbeWords % kWords.size() == 0 && kLongProbeWords % kWords.size() == 0);

}  // namespace

PromptText::PromptText() : rng_(std::random_device{}()) {}

std::string PromptText::Make(int64_t words) {
  char nonce[64];
  std::snprintf(nonce, sizeof(nonce), "Request %016llx%016llx:",
                static_cast<unsigned long long>(rng_()), static_cast<unsigned long long>(rng_()));
  std::string text = nonce;
  // Shuffled passes over the list rather than independent draws: every word is equally frequent,
  // so a prompt's token count follows its length, not its luck. Independent draws put a
  // 128-token sweep prompt 26% off its target.
  std::array<std::string_view, kWords.size()> order = kWords;
  for (int64_t i = 0; i < words; ++i) {
    const size_t slot = static_cast<size_t>(i) % order.size();
    if (slot == 0) std::shuffle(order.begin(), order.end(), rng_);
    text += ' ';
    text += order[slot];
  }
  return text;
}

int64_t TokenScale::WordsFor(int64_t prompt_tokens) const {
  return std::max<int64_t>(1, std::llround((prompt_tokens - intercept) / slope));
}

StatusOr<TokenScale> Calibrate(const Target& target, PromptText* text) {
  RequestResult short_result = MeasurePrompt(target, text->Make(kShortProbeWords), 1);
  DS_RETURN_IF_ERROR(short_result.status);
  RequestResult long_result = MeasurePrompt(target, text->Make(kLongProbeWords), 1);
  DS_RETURN_IF_ERROR(long_result.status);
  const Measurement& short_probe = short_result.measurement;
  const Measurement& long_probe = long_result.measurement;
  TokenScale scale;
  scale.slope = static_cast<double>(long_probe.prompt_tokens - short_probe.prompt_tokens) /
                (kLongProbeWords - kShortProbeWords);
  if (!(scale.slope > 0)) {
    return DataLossError(target.url.text + ": prompt token counts did not grow with the prompt (" +
                         std::to_string(short_probe.prompt_tokens) + " then " +
                         std::to_string(long_probe.prompt_tokens) + ")");
  }
  scale.intercept = short_probe.prompt_tokens - scale.slope * kShortProbeWords;
  return scale;
}

StatusOr<TokenScales> CalibrateAll(const std::vector<Target>& targets, PromptText* text) {
  TokenScales scales;
  for (const Target& t : targets) {
    DS_ASSIGN_OR_RETURN(scales[t.label], Calibrate(t, text));
  }
  return scales;
}

}  // namespace ds::bench
