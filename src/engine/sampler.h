// Turns logits into the next token id: penalties, then temperature, top-k, top-p and min-p
// filtering, then a seeded draw. Temperature <= 0 is greedy (argmax of the penalised logits).
// Thread safety: a Sampler belongs to one request.
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <span>
#include <vector>

namespace ds::engine {

struct SamplingParams {
  float temperature = 0.8f;
  int64_t top_k = 40;        // <= 0 disables
  float top_p = 0.95f;       // >= 1 disables
  float min_p = 0.05f;       // <= 0 disables
  uint64_t seed = 0;
  float repeat_penalty = 1.0f;  // 1 disables; llama.cpp semantics over the last repeat_last_n ids
  int64_t repeat_last_n = 64;
  // OpenAI semantics over the generated ids only: logit -= presence * (count > 0) +
  // frequency * count.
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  std::vector<std::pair<int32_t, float>> logit_bias;  // added to the raw logit of each id
};

class Sampler {
 public:
  explicit Sampler(SamplingParams params);

  // Picks the next id from logits[n_vocab]; `history` holds the ids seen so far (prompt and
  // generated) for the repetition penalty, of which the last `num_generated` were generated
  // (presence and frequency penalties). Does not modify `logits`.
  int32_t Sample(std::span<const float> logits, std::span<const int32_t> history,
                 size_t num_generated = 0);

 private:
  struct Candidate {
    int32_t id;
    float logit;
  };
  // apply(candidate, occurrences) once for each distinct id of ids in the vocabulary; the
  // candidates are in id order when it runs.
  template <typename Apply>
  void ForEachDistinctId(std::span<const int32_t> ids, Apply apply);
  void ApplyRepeatPenalty(std::span<const int32_t> history);
  void ApplyOpenAiPenalties(std::span<const int32_t> generated);
  void KeepTopK();
  void SoftmaxAndFilter();
  // An index into probs_, drawn with rng_.
  size_t Pick();

  SamplingParams params_;
  std::mt19937_64 rng_;
  std::vector<Candidate> candidates_;
  std::vector<float> probs_;
  // Reused by every call, so that sampling allocates nothing once they have grown.
  std::vector<int32_t> counts_;  // all zero between calls
  std::vector<double> cumulative_;
};

// The k best {id, log-softmax} over the full vocabulary of raw logits, best first.
struct TokenLogprob {
  int32_t id;
  float logprob;
};
std::vector<TokenLogprob> TopLogprobs(std::span<const float> logits, int64_t k);
// log(sum(exp(logits))): a logit minus it is the token's log-softmax.
float LogSoftmaxNormalizer(std::span<const float> logits);

}  // namespace ds::engine
