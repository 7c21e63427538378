// Gated DeltaNet kernels for the hybrid models (qwen35, qwen35moe, qwen3next): the causal
// depthwise conv1d with its rolling state, the gated delta rule, and the small per-head helpers
// around them. All f32.
//
// Recurrent state of one DeltaNet layer for one sequence:
//   conv state  [kernel_size - 1][channels]      the last kernel_size-1 pre-conv inputs, oldest
//                                                first; all zero at sequence start.
//   delta state [num_v_heads][head_dim_k][head_dim_v]
//                                                per value head the TRANSPOSE of the dv x dk matrix
//                                                S of the recurrence: element S[i][j] (value dim i,
//                                                key dim j) lives at h*dk*dv + j*dv + i. Zero at
//                                                sequence start. This layout makes every inner loop
//                                                a contiguous axpy over dv.
// Both are plain bytes: snapshot/restore may memcpy them.
//
// The rule runs token by token for prefill as for decode, so a sequence may be split anywhere,
// each piece continuing from the state the previous one left, with the same bits as one run. It
// takes 6.9 ms for 512 tokens of the bench model's layer (16 value heads of 64 x 64) on 2 threads.
// A chunked (WY/UT) form with small matrix products per chunk of 64 tokens took 28.7 ms there,
// and 90.7 ms against the recurrence's 75.3 with heads of 128 x 128, but was measured with
// 16-column register tiles, which GCC 12 spilled (the recurrence then took 18.1-22.1 ms).
//
// Thread safety: stateless; functions taking a ThreadPool split value heads (or channel blocks)
// across it and return when done; pool may be null (run on the calling thread). Results do not
// depend on the thread count. Nothing is allocated.
#pragma once

#include <cmath>
#include <cstdint>

#include "base/thread_pool.h"

namespace ds::kernels {

// Largest conv kernel CausalConv1dSilu accepts (the models use 4).
inline constexpr int64_t kMaxConvKernelSize = 8;

// Which key head value head h reads when there are more value heads than key heads.
enum class KeyHeadMapping {
  kTiled,    // h % num_k_heads (qwen35, qwen35moe)
  kGrouped,  // h / (num_v_heads / num_k_heads) (qwen3next)
};

// Key head read by value head h.
inline int64_t KeyHeadFor(int64_t h, int64_t num_k_heads, int64_t num_v_heads,
                          KeyHeadMapping mapping) {
  return mapping == KeyHeadMapping::kTiled ? h % num_k_heads : h / (num_v_heads / num_k_heads);
}

// Channels a CausalConv1dSilu range starts at a multiple of.
inline constexpr int64_t kConvChannelAlign = 64;

// Causal depthwise conv over time followed by SiLU, continuing from `state`, for channels
// [c0, c1) of `channels`:
//   out[t][c] = silu(sum_{i<K} w[i][c] * in(t - (K-1) + i, c)), where in(t', c) is x[t'][c] for
//   t' >= 0 and state[K-1+t'][c] for t' < 0;
// then state becomes the last K-1 inputs of the combined sequence (state followed by x).
//   x     [n_tokens][channels]
//   w     [kernel_size][channels]   GGUF ssm_conv1d {K, channels} transposed (tap by tap), tap
//                                   K-1 multiplies the newest input. Gathering a block's taps
//                                   from the GGUF layout (a channel's taps contiguous) took most
//                                   of a one-token conv.
//   state [kernel_size-1][channels] in/out
//   out   [n_tokens][channels]      may alias x
// Runs on the calling thread: the model calls it for the rows of the projection that produce
// the channels as each task of that pass finishes them (MatMulJob::rows_done). Splitting the
// tokens into several calls, or the channels into ranges, gives bit-identical outputs and state.
// REQUIRES: 1 <= kernel_size <= kMaxConvKernelSize, c0 % kConvChannelAlign == 0,
// 0 <= c0 <= c1 <= channels.
void CausalConv1dSilu(const float* x, int64_t n_tokens, int64_t channels, const float* w,
                      int64_t kernel_size, float* state, float* out, int64_t c0, int64_t c1);

// Inputs and outputs of the gated delta rule over n_tokens tokens. Per value head h with key head
// j = KeyHeadFor(h, ...) and each token t in order:
//   S = exp(g[t][h]) * S;  d = beta[t][h] * (v_t,h - S k_t,j);  S = S + d k_t,j^T;  o_t,h = S q_t,j
// Strides are in floats between consecutive tokens, so q, k and v may point into one
// [n_tokens][2*Hk*dk + Hv*dv] conv output row buffer.
struct GatedDeltaArgs {
  const float* q = nullptr;     // head j of token t at q + t*q_stride + j*head_dim_k; L2-normalised
                                // and already scaled by 1/sqrt(head_dim_k)
  const float* k = nullptr;     // head j of token t at k + t*k_stride + j*head_dim_k; L2-normalised
  const float* v = nullptr;     // head h of token t at v + t*v_stride + h*head_dim_v
  const float* g = nullptr;     // [n_tokens][num_v_heads] log decay, <= 0
  const float* beta = nullptr;  // [n_tokens][num_v_heads] write strength, in (0, 1)
  int64_t q_stride = 0;
  int64_t k_stride = 0;
  int64_t v_stride = 0;
  int64_t n_tokens = 0;
  int64_t num_k_heads = 0;  // Hk
  int64_t num_v_heads = 0;  // Hv, a multiple of Hk
  int64_t head_dim_k = 0;   // dk
  int64_t head_dim_v = 0;   // dv
  KeyHeadMapping mapping = KeyHeadMapping::kTiled;
  float* state = nullptr;  // [num_v_heads][head_dim_k][head_dim_v] (S transposed), in/out
  float* out = nullptr;    // [n_tokens][num_v_heads][head_dim_v]; must not overlap the inputs
};

// Token-by-token recurrence over args.n_tokens tokens (cost per token ~ 4*dk*dv per head).
void GatedDeltaRecurrent(const GatedDeltaArgs& args, ThreadPool* pool);

// In place, per head: x_h = x_h * scale / max(||x_h||_2, eps). x is [n_heads][head_dim]. The
// models use eps = attention.layer_norm_rms_epsilon, scale = 1/sqrt(dk) for q and 1 for k.
void L2NormalizeHeads(float* x, int64_t n_heads, int64_t head_dim, float eps, float scale);

// In place, per head: o_h = o_h / sqrt(mean(o_h^2) + eps) * weight * silu(z_h).
//   o [n_heads][head_dim], z [n_heads][head_dim], weight [head_dim] (ssm_norm, stored raw).
void GatedRmsNorm(float* o, const float* z, const float* weight, int64_t n_heads, int64_t head_dim,
                  float eps);

inline float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// log(1 + e^x) without overflow for large x or loss of precision for very negative x.
inline float Softplus(float x) { return std::fmax(x, 0.0f) + std::log1p(std::exp(-std::fabs(x))); }

}  // namespace ds::kernels
