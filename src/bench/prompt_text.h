// Prompts no cache has seen: each starts with a nonce drawn from the OS, so no prefix cache can
// serve any of it (beyond the chat template's own first tokens), then seeded random words. A
// server's tokenizer is unknown to the client, so a two-point calibration against the server's
// reported prompt tokens turns a target token count into a word count.
// Thread safety: PromptText is not thread safe; use one per thread.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "base/status.h"
#include "bench/target.h"

namespace ds::bench {

class PromptText {
 public:
  PromptText();
  // `words` words after the nonce, in shuffled passes over a fixed list.
  std::string Make(int64_t words);

 private:
  std::mt19937_64 rng_;
};

// prompt tokens ~= intercept + slope * words, for one server and API.
struct TokenScale {
  double intercept = 0;
  double slope = 1;
  int64_t WordsFor(int64_t prompt_tokens) const;
};

// Measures the scale with two short prompts (1 generated token each); they also warm the server.
StatusOr<TokenScale> Calibrate(const Target& target, PromptText* text);
// Calibrate for each target, by label.
using TokenScales = std::map<std::string, TokenScale>;
StatusOr<TokenScales> CalibrateAll(const std::vector<Target>& targets, PromptText* text);

}  // namespace ds::bench
