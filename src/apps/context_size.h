// The context size serve picks when --ctx-size is not given, what a sequence costs in memory,
// and what the start-up line says when the context is short for the model or for agents.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "state/sequence_state.h"

namespace ds::apps {

struct SequenceMemory {
  int64_t kv_bytes_per_token = 0;  // K and V of every attention layer
  int64_t recurrent_bytes = 0;     // the DeltaNet layers' state, whatever the length
};

SequenceMemory MemoryOf(const state::StateLayout& layout);

// The model's trained context (65,536 when it states none), halved until `parallel` sequences
// at that length fit in `usable_bytes` (negative: unknown, no limit), down to 4,096.
int64_t DefaultContextTokens(int64_t trained, const SequenceMemory& memory, int parallel,
                             int64_t usable_bytes);

// Lines for the start-up log: the memory a sequence takes, and warnings when `context` is less
// than the model's trained one or than the prompts agent clients send.
std::vector<std::string> ContextNotes(int64_t context, int64_t trained, int parallel,
                                      const SequenceMemory& memory, bool chosen);

}  // namespace ds::apps
