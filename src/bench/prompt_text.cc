#include "bench/prompt_text.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <string_view>

namespace ds::bench {
namespace {

constexpr std::array<std::string_view, PromptText::kWordListSize> kWords = {
    "river",  "stone",   "garden", "window", "silver", "morning", "quiet",  "market",
    "bridge", "candle",  "forest", "letter", "yellow", "harbor",  "planet", "winter",
    "copper", "meadow",  "signal", "travel", "orange", "pocket",  "thunder", "velvet",
    "anchor", "library", "motion", "pepper", "castle", "engine",  "island", "ladder",
    "number", "paper",   "rocket", "shadow", "ticket", "valley",  "wonder", "basket",
    "circle", "dragon",  "feather", "guitar", "hollow", "jacket", "kettle", "lantern",
    "marble", "needle",  "object", "puzzle", "rabbit", "saddle",  "tunnel", "umbrella",
    "violet", "walnut",  "zipper", "button", "cotton", "desert",  "falcon", "glacier"};

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

}  // namespace ds::bench
