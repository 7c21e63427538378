// A test model that "generates" a fixed script: after the prompt it puts all probability on the
// script's next id, so server tests can drive exact outputs (tool calls, reasoning, stop
// strings) through the real engine, output parser and API formatters.
#pragma once

#include <vector>

#include "model/model.h"

namespace ds::apps {

class ScriptedModel : public model::Model {
 public:
  // REQUIRES: every id < n_vocab. After the script ends it repeats its last id.
  ScriptedModel(int64_t n_vocab, std::vector<int32_t> script);

  state::StateLayout StateLayoutFor(int64_t max_tokens) const override;
  // The first call on an empty state is the prompt (tests use one prefill chunk); its length is
  // kept in the state so each later step knows its position in the script.
  Status Forward(std::span<const int32_t> tokens, state::SequenceState* state,
                 model::LogitsMode mode, float* logits, ThreadPool* pool) override;

 private:
  std::vector<int32_t> script_;
};

}  // namespace ds::apps
