// Building blocks shared by the architecture files: row-wise norms, embedding lookup and the
// SwiGLU feed-forward. Each works on a batch of token rows, x[n_tokens][width].
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>

#include "base/thread_pool.h"
#include "kernels/kernels.h"
#include "model/hparams.h"
#include "state/sequence_state.h"

namespace ds::model {

// fn(begin, end) over ranges of [0, n) on the pool (which may be null), each range worth at least
// kMinRangeOps element operations at item_ops per item: a prompt's per-token loops spread over
// the threads, while a decode step's run inline instead of paying a fork and join.
inline constexpr int64_t kMinRangeOps = 1 << 15;
void ForRanges(ThreadPool* pool, int64_t n, int64_t item_ops,
               FunctionRef<void(int64_t, int64_t)> fn);

// x[t] = dequantised row tokens[t] of the embedding matrix {n_embd, n_vocab}.
void EmbedTokens(const kernels::MatrixView& embedding, std::span<const int32_t> tokens, float* x);

// y[t] = rmsnorm(x[t]) * weight for each of `rows` rows of `width`. y may alias x.
void RmsNormRows(const float* x, const float* weight, int64_t rows, int64_t width, float eps,
                 float* y, ThreadPool* pool);

// x[t] += y[t] for each of `rows` rows of `width`.
void AddRows(float* x, const float* y, int64_t rows, int64_t width, ThreadPool* pool);

// y[t][n_rows] = W x[t] + bias (bias may be null).
void Linear(const kernels::MatrixView& w, const float* bias, const float* x, int64_t n_tokens,
            float* y, ThreadPool* pool);

// y[t][n_rows] += bias for t < n_tokens; nothing when bias is null.
void AddBias(const float* bias, int64_t n_tokens, int64_t n_rows, float* y);

// One product of the input of Project: y[t][w.n_rows] = W x[t], and then, where set, rows_done
// on each range of its rows, aligned to row_align (kernels::MatMulJob::rows_done).
struct Projection {
  const kernels::MatrixView& w;
  float* y;
  const FunctionRef<void(int64_t, int64_t)>* rows_done = nullptr;
  int64_t row_align = 1;
};
// Products of one input x[n_tokens][n_cols], run as one parallel loop with x encoded once: every
// separate product is a fork and join of the pool, its threads' shares end at different times,
// and a prompt's activations would be quantised once per matrix. Each y has the bits Linear
// gives it.
void Project(const float* x, int64_t n_tokens, std::initializer_list<Projection> projections,
             ThreadPool* pool);

// Appends the K and V rows of n_tokens new tokens (k, v: [n_tokens][n_head_kv * head_dim], normed
// and rotated) to attention layer `layer` of the state, in its KV format, then attends
// q[n_tokens][n_head * head_dim] over everything the layer holds into out (same shape as q).
void AttendOverCache(const HParams& hp, int layer, const float* q, const float* k,
                     const float* v, int64_t n_tokens, state::SequenceState* state, float* out,
                     ThreadPool* pool);

// Scratch buffers for a SwiGLU FFN over n_tokens rows of width n_ff.
struct FfnWeights {
  kernels::MatrixView gate;  // {n_embd, n_ff}
  kernels::MatrixView up;    // {n_embd, n_ff}
  kernels::MatrixView down;  // {n_ff, n_embd}
};
// out[t] = down(silu(gate x[t]) * up x[t]); gate_buf and up_buf hold n_tokens * n_ff floats.
void SwiGluFfn(const FfnWeights& w, const float* x, int64_t n_tokens, float* gate_buf,
               float* up_buf, float* out, ThreadPool* pool);

}  // namespace ds::model
