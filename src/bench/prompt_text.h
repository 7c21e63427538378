// Prompts no cache has seen: each starts with a nonce drawn from the OS, so no prefix cache can
// serve any of it (beyond the chat template's own first tokens), then seeded random words
// (calibration.h turns a target token count into a word count).
// Thread safety: PromptText is not thread safe; use one per thread.
#pragma once

#include <cstdint>
#include <random>
#include <string>

namespace ds::bench {

class PromptText {
 public:
  // Distinct words; a prompt of a multiple of this many words has a token count that does not
  // depend on the draw.
  static constexpr int64_t kWordListSize = 64;

  PromptText();
  // `words` words after the nonce, in shuffled passes over a fixed list.
  std::string Make(int64_t words);

 private:
  std::mt19937_64 rng_;
};

}  // namespace ds::bench
