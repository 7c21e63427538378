#include "engine/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

namespace ds::engine {
namespace {

TEST(SamplerTest, GreedyPicksArgmaxAndPrefersLowerIdOnTies) {
  SamplingParams params;
  params.temperature = 0.0f;
  Sampler sampler(params);
  std::vector<float> logits = {0.1f, 3.0f, 3.0f, -1.0f};
  EXPECT_EQ(sampler.Sample(logits, {}), 1);
}

TEST(SamplerTest, RepeatPenaltyDemotesSeenTokens) {
  SamplingParams params;
  params.temperature = 0.0f;
  params.repeat_penalty = 2.0f;
  Sampler sampler(params);
  std::vector<float> logits = {2.0f, 1.5f, -1.0f};
  std::vector<int32_t> history = {0};
  EXPECT_EQ(sampler.Sample(logits, history), 1);  // 2.0 / 2 = 1.0 < 1.5
}

// Sampling at `temperature` over every candidate: top-k, top-p and min-p off.
SamplingParams Unfiltered(float temperature, uint64_t seed) {
  SamplingParams params;
  params.temperature = temperature;
  params.top_k = 0;
  params.top_p = 1.0f;
  params.min_p = 0.0f;
  params.seed = seed;
  return params;
}

TEST(SamplerTest, SameSeedSameDraws) {
  const SamplingParams params = Unfiltered(1.0f, 42);
  std::vector<float> logits = {1.0f, 1.2f, 0.8f, 1.1f, 0.9f};
  Sampler a(params), b(params);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(a.Sample(logits, {}), b.Sample(logits, {}));
}

// The draw is std::discrete_distribution's (without its allocations), so a seed gives the tokens
// it gave before. Logits in descending order keep the candidates in id order.
TEST(SamplerTest, DrawsAsStdDiscreteDistribution) {
  const SamplingParams params = Unfiltered(0.7f, 7);
  const std::vector<float> logits = {2.0f, 1.7f, 1.1f, 0.4f, 0.3f, -0.5f, -2.0f};
  std::vector<float> probs(logits.size());
  double sum = 0.0;
  for (size_t i = 0; i < logits.size(); ++i) {
    probs[i] = std::exp((logits[i] - logits[0]) / params.temperature);
    sum += probs[i];
  }
  for (float& p : probs) p = static_cast<float>(p / sum);
  std::mt19937_64 rng(params.seed);
  Sampler sampler(params);
  std::map<int32_t, int> picked;
  for (int i = 0; i < 500; ++i) {
    std::discrete_distribution<int32_t> want(probs.begin(), probs.end());
    const int32_t id = sampler.Sample(logits, {});
    ASSERT_EQ(id, want(rng)) << "draw " << i;
    ++picked[id];
  }
  EXPECT_GE(picked.size(), 5u);
}

TEST(SamplerTest, TopKOneIsGreedyAndMinPCutsTail) {
  SamplingParams params;
  params.temperature = 1.0f;
  params.top_k = 1;
  params.seed = 7;
  Sampler top1(params);
  std::vector<float> logits = {0.0f, 0.5f, 0.4f};
  for (int i = 0; i < 20; ++i) EXPECT_EQ(top1.Sample(logits, {}), 1);

  params.top_k = 0;
  params.top_p = 1.0f;
  params.min_p = 0.5f;  // keeps ids whose probability is at least half the best one's
  Sampler min_p(params);
  std::vector<float> skewed = {5.0f, 4.9f, 0.0f, -3.0f};
  std::map<int32_t, int> counts;
  for (int i = 0; i < 400; ++i) counts[min_p.Sample(skewed, {})]++;
  EXPECT_GT(counts[0], 0);
  EXPECT_GT(counts[1], 0);
  EXPECT_EQ(counts[2] + counts[3], 0);
}

TEST(SamplerTest, LogitBiasAndOpenAiPenalties) {
  SamplingParams params;
  params.temperature = 0.0f;
  params.logit_bias = {{2, 5.0f}};
  Sampler biased(params);
  std::vector<float> logits = {1.0f, 2.0f, 0.0f};
  EXPECT_EQ(biased.Sample(logits, {}), 2);

  params.logit_bias.clear();
  params.frequency_penalty = 0.6f;
  Sampler penalised(params);
  std::vector<int32_t> history = {1, 1, 0};  // prompt id 1, then generated 1 and 0
  // id 1: 2.0 - 0.6 = 1.4 (the prompt occurrence does not count); id 0: 1.0 - 0.6 = 0.4.
  EXPECT_EQ(penalised.Sample(logits, history, 2), 1);
  params.presence_penalty = 1.0f;
  Sampler both(params);
  std::vector<float> close = {1.5f, 2.0f, 0.0f};
  std::vector<int32_t> one_generated = {1};
  EXPECT_EQ(both.Sample(close, one_generated, 1), 0);  // 2.0 - 1.6 = 0.4 < 1.5
}

TEST(TopLogprobsTest, LogSoftmaxOfRawLogits) {
  std::vector<float> logits = {1.0f, 3.0f, 2.0f};
  std::vector<TokenLogprob> top = TopLogprobs(logits, 2);
  ASSERT_EQ(top.size(), 2u);
  double norm = std::log(std::exp(1.0) + std::exp(3.0) + std::exp(2.0));
  EXPECT_EQ(top[0].id, 1);
  EXPECT_NEAR(top[0].logprob, 3.0 - norm, 1e-6);
  EXPECT_EQ(top[1].id, 2);
  EXPECT_NEAR(top[1].logprob, 2.0 - norm, 1e-6);
}

}  // namespace
}  // namespace ds::engine
