// Runs one prompt to completion on one sequence: chunked prefill, then token-by-token decode,
// with honest timings (cached tokens never count as computed; decode rate over the decode window).
// Thread safety: call from one thread; the Model's Forward is not reentrant.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <unordered_set>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "engine/sampler.h"
#include "model/model.h"
#include "state/sequence_state.h"

namespace ds::engine {

struct GenerateOptions {
  int64_t max_new_tokens = 128;
  SamplingParams sampling;
  int64_t top_logprobs = 0;        // K best logprobs recorded per generated token
  int64_t prefill_chunk_tokens = 512;  // bounds the scratch memory of one Forward
  std::unordered_set<int32_t> stop_ids;  // end-of-generation ids; the stop id is kept
  // Called with each generated id; returning false stops generation.
  std::function<bool(int32_t id)> on_token;
};

struct Timings {
  int64_t prompt_tokens = 0;
  int64_t cached_prompt_tokens = 0;    // already in the state before the call
  int64_t computed_prompt_tokens = 0;  // run through the model by this call
  double prefill_s = 0;                // wall time of the computed prompt tokens
  int64_t generated_tokens = 0;
  double decode_s = 0;                 // first generated token to last

  double prefill_tokens_per_s() const;
  // (generated - 1) / decode_s: the first token belongs to prefill.
  double decode_tokens_per_s() const;
};

enum class StopReason { kLength, kStopToken, kCallback };

struct GenerateResult {
  std::vector<int32_t> generated_ids;
  std::vector<std::vector<TokenLogprob>> top_logprobs;  // per generated token, when requested
  StopReason stop_reason = StopReason::kLength;
  Timings timings;
};

// Continues `state` (which may already hold a prefix of `prompt`) with the rest of `prompt`, then
// generates. REQUIRES: state holds exactly prompt[0, state->num_tokens()).
StatusOr<GenerateResult> Generate(model::Model& model, state::SequenceState* state,
                                  std::span<const int32_t> prompt, const GenerateOptions& options,
                                  ThreadPool* pool);

}  // namespace ds::engine
