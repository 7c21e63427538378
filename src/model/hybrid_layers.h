// The three layer pieces of the hybrid Qwen models (qwen35, qwen35moe, qwen3next): the Gated
// DeltaNet mixer, the gated full-attention mixer and the MoE feed-forward with a shared expert.
// Each takes normalised input rows xn[n_tokens][n_embd] and writes out[n_tokens][n_embd]; the
// scratch structs own their buffers, grown to the largest batch seen, so decode never allocates.
#pragma once

#include <cstdint>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/gated_delta.h"
#include "kernels/kernels.h"
#include "model/blocks.h"
#include "model/hparams.h"
#include "state/sequence_state.h"

namespace ds::model {

struct DeltaNetWeights {
  kernels::MatrixView qkv;    // {n_embd, 2*key_dim + value_dim}: rows [q | k | v]
  kernels::MatrixView gate;   // {n_embd, value_dim}: z
  kernels::MatrixView beta;   // {n_embd, Hv}; unused when `ba` is fused (qwen3next)
  kernels::MatrixView alpha;  // {n_embd, Hv}
  kernels::MatrixView ba;     // {n_embd, 2*Hv}, rows per key head [b x r | a x r], r = Hv/Hk
  bool fused_ba = false;
  const float* conv = nullptr;     // [kernel][conv_dim], tap by tap
  const float* dt_bias = nullptr;  // [Hv]
  const float* ssm_a = nullptr;    // [Hv], = -exp(A_log)
  const float* norm = nullptr;     // [dv], stored raw
  kernels::MatrixView out;    // {value_dim, n_embd}
};

struct DeltaNetDims {
  int64_t n_embd, num_k_heads, num_v_heads, head_dim, conv_kernel;
  float eps;
  kernels::KeyHeadMapping mapping;

  int64_t key_dim() const { return num_k_heads * head_dim; }
  int64_t value_dim() const { return num_v_heads * head_dim; }
  int64_t conv_dim() const { return 2 * key_dim() + value_dim(); }
};

class DeltaNetMixer {
 public:
  // Advances the layer's recurrent slots by n_tokens, with the same bits whether they come in
  // one batch or several.
  void Forward(const DeltaNetDims& dims, const DeltaNetWeights& w, const float* xn,
               int64_t n_tokens, float* conv_state, float* ssm_state, float* out,
               ThreadPool* pool);

 private:
  // beta_ and g_ from the projections b_ and a_ (or ba_, interleaved per key head).
  void Gates(const DeltaNetDims& dims, const DeltaNetWeights& w, int64_t n_tokens,
             ThreadPool* pool);

  std::vector<float> mixed_, z_, b_, a_, ba_, g_, beta_, o_;
};

struct GatedAttentionWeights {
  kernels::MatrixView q;  // {n_embd, 2*H*hd}: per head [q_h | gate_h]
  kernels::MatrixView k;  // {n_embd, Hkv*hd}
  kernels::MatrixView v;  // {n_embd, Hkv*hd}
  const float* q_norm = nullptr;  // [hd]
  const float* k_norm = nullptr;  // [hd]
  kernels::MatrixView out;  // {H*hd, n_embd}
};

class GatedAttentionMixer {
 public:
  // Appends the tokens' K and V to the state's rows of `layer` (positions num_tokens()...) and
  // attends causally. REQUIRES: state->Reserve() covers the new tokens.
  void Forward(const HParams& hp, const GatedAttentionWeights& w, const float* xn,
               int64_t n_tokens, int layer, state::SequenceState* state, float* out,
               ThreadPool* pool);

 private:
  std::vector<float> q_gate_, q_, k_, v_, attn_;
};

struct MoeWeights {
  kernels::MatrixView router;  // {n_embd, n_expert}
  std::vector<FfnWeights> experts;
  FfnWeights shared;
  const float* shared_gate = nullptr;  // [n_embd]
};

class MoeFfn {
 public:
  // out = sum over the top-k experts of renormalised softmax weight * expert(xn)
  //       + sigmoid(shared_gate . xn) * shared(xn). Tokens are grouped by expert, and every
  // routed expert's gate and up products run in one parallel pass and every down product in
  // another, so each expert's weights are read once per batch and the layer pays a few forks
  // and joins of the pool, not a few per expert (a decode step with a small router pays two).
  // A token's result has the same bits in any batch.
  void Forward(const HParams& hp, const MoeWeights& w, const float* xn, int64_t n_tokens,
               float* out, ThreadPool* pool);

 private:
  // Chooses each token's experts and weights from router_logits_, and groups the (token, slot)
  // pairs by expert.
  void Route(const HParams& hp, int64_t n_tokens, ThreadPool* pool);
  std::vector<kernels::MatMulJob> jobs_;
  std::vector<float> router_logits_, expert_out_, gate_buf_, up_buf_;
  std::vector<int32_t> chosen_;  // [n_tokens][k]
  std::vector<float> weights_;   // [n_tokens][k]
  // [n_expert + 1]: expert e's (token, slot) pairs are rows [expert_start_[e], [e + 1]).
  std::vector<int64_t> expert_start_;
  std::vector<int64_t> row_of_;        // [n_tokens * k]: each pair's row in expert order
  std::vector<int64_t> token_of_row_;  // [n_tokens * k]: the token of each row in expert order
  std::vector<int64_t> next_row_;      // [n_expert]: Route's cursor per expert
};

}  // namespace ds::model
