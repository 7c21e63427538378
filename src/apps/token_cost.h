// What one token costs a model in its weight matrices, from the GGUF's tensor list: the bytes a
// decode step must stream from memory (the decode floor is bandwidth / bytes) and the
// multiply-adds a prefilled token takes (prefill GFLOPS = 2 * macs * tok/s). Attention over the
// context is excluded: it depends on depth, not on the model.
#pragma once

#include "gguf/gguf.h"
#include "model/hparams.h"

namespace ds::apps {

struct TokenCost {
  double weight_bytes = 0;
  double macs = 0;
};

// Routed expert tensors (names containing "_exps.") count n_expert_used / n_expert of their
// size; the token embedding counts one row unless it doubles as the output matrix; vectors
// (norms, biases, gates of one row) stream bytes but are not counted as multiply-adds.
TokenCost ActiveCostPerToken(const gguf::File& file, const model::HParams& hp);

}  // namespace ds::apps
