#include "engine/generate.h"

#include <algorithm>

#include "base/clock.h"

namespace ds::engine {

double Timings::prefill_tokens_per_s() const {
  return prefill_s > 0 ? computed_prompt_tokens / prefill_s : 0.0;
}

double Timings::decode_tokens_per_s() const {
  return decode_s > 0 && generated_tokens > 1 ? (generated_tokens - 1) / decode_s : 0.0;
}

StatusOr<GenerateResult> Generate(model::Model& model, state::SequenceState* state,
                                  std::span<const int32_t> prompt, const GenerateOptions& options,
                                  ThreadPool* pool) {
  const int64_t n_vocab = model.hparams().n_vocab;
  const int64_t n_prompt = static_cast<int64_t>(prompt.size());
  for (int32_t id : prompt) {
    if (id < 0 || id >= n_vocab) {
      return InvalidArgumentError("token id " + std::to_string(id) +
                                  " is outside the vocabulary of " + std::to_string(n_vocab));
    }
  }
  if (n_prompt <= state->num_tokens()) {
    return InvalidArgumentError("the prompt must contain at least one token not yet in the state");
  }
  if (n_prompt + options.max_new_tokens > state->layout().max_tokens) {
    return OutOfRangeError("prompt of " + std::to_string(n_prompt) + " tokens plus " +
                           std::to_string(options.max_new_tokens) +
                           " new tokens exceeds the context size of " +
                           std::to_string(state->layout().max_tokens));
  }

  GenerateResult result;
  Timings& timings = result.timings;
  timings.prompt_tokens = n_prompt;
  timings.cached_prompt_tokens = state->num_tokens();
  timings.computed_prompt_tokens = n_prompt - state->num_tokens();

  std::vector<float> logits(n_vocab);
  Clock::time_point prefill_start = Clock::now();
  while (state->num_tokens() < n_prompt) {
    int64_t begin = state->num_tokens();
    int64_t count = std::min(options.prefill_chunk_tokens, n_prompt - begin);
    DS_RETURN_IF_ERROR(model.Forward(prompt.subspan(begin, count), state,
                                     model::LogitsMode::kLast, logits.data(), pool));
  }

  // Reserved up front so that a decode step allocates nothing (top logprobs aside).
  std::vector<int32_t> history;
  history.reserve(prompt.size() + options.max_new_tokens);
  history.assign(prompt.begin(), prompt.end());
  result.generated_ids.reserve(options.max_new_tokens);
  Sampler sampler(options.sampling);
  Clock::time_point first_token_time;
  for (int64_t step = 0; step < options.max_new_tokens; ++step) {
    if (step > 0) {
      int32_t last = history.back();
      DS_RETURN_IF_ERROR(model.Forward(std::span<const int32_t>(&last, 1), state,
                                       model::LogitsMode::kLast, logits.data(), pool));
    }
    int32_t id = sampler.Sample(logits, history, result.generated_ids.size());
    if (options.top_logprobs > 0) {
      result.top_logprobs.push_back(TopLogprobs(logits, options.top_logprobs));
    }
    Clock::time_point now = Clock::now();
    if (step == 0) {
      timings.prefill_s = std::chrono::duration<double>(now - prefill_start).count();
      first_token_time = now;
    }
    timings.decode_s = std::chrono::duration<double>(now - first_token_time).count();
    history.push_back(id);
    result.generated_ids.push_back(id);
    timings.generated_tokens = static_cast<int64_t>(result.generated_ids.size());
    if (options.on_token && !options.on_token(id)) {
      result.stop_reason = StopReason::kCallback;
      break;
    }
    if (options.stop_ids.count(id)) {
      result.stop_reason = StopReason::kStopToken;
      break;
    }
  }
  return result;
}

}  // namespace ds::engine
