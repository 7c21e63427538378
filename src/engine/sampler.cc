#include "engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/kernels.h"

namespace ds::engine {

Sampler::Sampler(SamplingParams params) : params_(params), rng_(params.seed) {}

template <typename Apply>
void Sampler::ForEachDistinctId(std::span<const int32_t> ids, Apply apply) {
  counts_.resize(candidates_.size());
  for (int32_t id : ids) {
    if (id >= 0 && id < static_cast<int32_t>(counts_.size())) ++counts_[id];
  }
  for (int32_t id : ids) {
    if (id < 0 || id >= static_cast<int32_t>(counts_.size()) || counts_[id] == 0) continue;
    apply(candidates_[id], counts_[id]);
    counts_[id] = 0;  // once per distinct id, and the counts are clear for the next call
  }
}

void Sampler::ApplyRepeatPenalty(std::span<const int32_t> history) {
  if (params_.repeat_penalty == 1.0f || params_.repeat_last_n == 0) return;
  size_t window = params_.repeat_last_n < 0
                      ? history.size()
                      : std::min<size_t>(history.size(), params_.repeat_last_n);
  ForEachDistinctId(history.last(window), [&](Candidate& c, int) {
    // Dividing a negative logit would raise its probability, so it is multiplied instead.
    c.logit = c.logit > 0 ? c.logit / params_.repeat_penalty : c.logit * params_.repeat_penalty;
  });
}

void Sampler::ApplyOpenAiPenalties(std::span<const int32_t> generated) {
  if (params_.presence_penalty == 0.0f && params_.frequency_penalty == 0.0f) return;
  ForEachDistinctId(generated, [&](Candidate& c, int count) {
    c.logit -= params_.presence_penalty + params_.frequency_penalty * count;
  });
}

void Sampler::KeepTopK() {
  auto by_logit = [](const Candidate& a, const Candidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  };
  int64_t k = params_.top_k <= 0 ? static_cast<int64_t>(candidates_.size())
                                 : std::min<int64_t>(params_.top_k, candidates_.size());
  std::partial_sort(candidates_.begin(), candidates_.begin() + k, candidates_.end(), by_logit);
  candidates_.resize(k);
}

void Sampler::SoftmaxAndFilter() {
  probs_.resize(candidates_.size());
  float max_logit = candidates_.front().logit;
  double sum = 0.0;
  for (size_t i = 0; i < candidates_.size(); ++i) {
    probs_[i] = std::exp((candidates_[i].logit - max_logit) / params_.temperature);
    sum += probs_[i];
  }
  for (float& p : probs_) p = static_cast<float>(p / sum);
  size_t keep = probs_.size();
  if (params_.top_p < 1.0f) {
    double cumulative = 0.0;
    for (size_t i = 0; i < probs_.size(); ++i) {
      cumulative += probs_[i];
      if (cumulative >= params_.top_p) {
        keep = i + 1;
        break;
      }
    }
  }
  if (params_.min_p > 0.0f) {
    float threshold = params_.min_p * probs_.front();
    size_t above = 1;
    while (above < keep && probs_[above] >= threshold) ++above;
    keep = above;
  }
  candidates_.resize(keep);
  probs_.resize(keep);
}

int32_t Sampler::Sample(std::span<const float> logits, std::span<const int32_t> history,
                        size_t num_generated) {
  candidates_.resize(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) {
    candidates_[i] = {static_cast<int32_t>(i), logits[i]};
  }
  for (const auto& [id, bias] : params_.logit_bias) {
    if (id >= 0 && id < static_cast<int32_t>(candidates_.size())) candidates_[id].logit += bias;
  }
  ApplyRepeatPenalty(history);
  ApplyOpenAiPenalties(history.last(std::min(num_generated, history.size())));
  if (params_.temperature <= 0.0f) {
    auto best = std::max_element(candidates_.begin(), candidates_.end(),
                                 [](const Candidate& a, const Candidate& b) {
                                   return a.logit < b.logit || (a.logit == b.logit && a.id > b.id);
                                 });
    return best->id;
  }
  KeepTopK();
  SoftmaxAndFilter();
  return candidates_[Pick()].id;
}

size_t Sampler::Pick() {
  // The draw of std::discrete_distribution over probs_, without the vectors it allocates for
  // every call: the same seed still gives the same tokens.
  if (probs_.size() < 2) return 0;
  double sum = 0.0;
  for (float p : probs_) sum += p;
  cumulative_.resize(probs_.size());
  double running = 0.0;
  for (size_t i = 0; i < probs_.size(); ++i) cumulative_[i] = running += probs_[i] / sum;
  cumulative_.back() = 1.0;
  const double u = std::generate_canonical<double, std::numeric_limits<double>::digits>(rng_);
  return std::lower_bound(cumulative_.begin(), cumulative_.end(), u) - cumulative_.begin();
}

float LogSoftmaxNormalizer(std::span<const float> logits) {
  float max_logit = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (float l : logits) sum += std::exp(static_cast<double>(l - max_logit));
  return max_logit + static_cast<float>(std::log(sum));
}

std::vector<TokenLogprob> TopLogprobs(std::span<const float> logits, int64_t k) {
  k = std::min<int64_t>(k, logits.size());
  const float log_norm = LogSoftmaxNormalizer(logits);
  std::vector<int32_t> ids(k);
  kernels::TopK(logits.data(), logits.size(), k, ids.data());
  std::vector<TokenLogprob> out;
  for (int32_t id : ids) out.push_back({id, logits[id] - log_norm});
  return out;
}

}  // namespace ds::engine
