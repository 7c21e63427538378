// Pre-tokenizers of byte-level BPE vocabularies: the regex splits llama.cpp applies for each
// tokenizer.ggml.pre value, run with PCRE2 (UTF mode, Unicode properties). Text is read the way
// llama.cpp reads it (unicode.h, lenient decoding) and each regex is applied, in order, inside the
// pieces the previous one produced; both the matches and the text between them become pieces.
// Thread safety: immutable after Create; Split may run concurrently.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace ds::text {

class PreTokenizer {
 public:
  // Supported: gpt-2 (and mpt, olmo, phi-2), llama3/llama-v3/llama-bpe (and dbrx, smaug-bpe),
  // qwen2 (and deepseek-r1-qwen, stablelm2), qwen35, deepseek-coder, and "" / "default".
  // Unimplemented for any other name.
  static StatusOr<std::unique_ptr<PreTokenizer>> Create(std::string_view pre_name);
  ~PreTokenizer();
  PreTokenizer(const PreTokenizer&) = delete;
  PreTokenizer& operator=(const PreTokenizer&) = delete;

  // Words of `text` in order; their concatenation is `text` with ill-formed bytes read as U+FFFD.
  std::vector<std::string> Split(std::string_view text) const;

  // llama.cpp's ignore_merges (Llama 3): a word that is itself a token is not merged.
  bool ignore_merges() const { return ignore_merges_; }

 private:
  struct Regex;
  PreTokenizer() = default;

  std::vector<std::unique_ptr<Regex>> regexes_;
  bool ignore_merges_ = false;
};

}  // namespace ds::text
