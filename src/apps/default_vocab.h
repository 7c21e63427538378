// The tokenizer of models made without an imported tokenizer.json: a byte-level BPE (Qwen-style
// special tokens and pre-tokenizer) whose merges are learned at make-model time from a short
// built-in English text, so the default model needs nothing from outside the project.
#pragma once

#include <cstdint>

#include "text/vocab.h"

namespace ds::apps {

// 256 byte tokens, up to `max_merges` learned merges, then the ChatML and tool/think specials.
text::Vocab MakeDefaultVocab(int64_t max_merges);

}  // namespace ds::apps
