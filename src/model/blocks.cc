#include "model/blocks.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "model/weights.h"

namespace ds::model {

void ForRanges(ThreadPool* pool, int64_t n, int64_t item_ops,
               FunctionRef<void(int64_t, int64_t)> fn) {
  if (n <= 0) return;
  if (pool == nullptr) return fn(0, n);
  // ParallelFor runs a loop of one grain inline.
  pool->ParallelFor(n, std::max<int64_t>(1, kMinRangeOps / std::max<int64_t>(1, item_ops)), fn);
}

void EmbedTokens(const kernels::MatrixView& embedding, std::span<const int32_t> tokens,
                 float* x) {
  for (size_t t = 0; t < tokens.size(); ++t) {
    DequantizeMatrixRow(embedding, tokens[t], x + t * embedding.n_cols);
  }
}

void RmsNormRows(const float* x, const float* weight, int64_t rows, int64_t width, float eps,
                 float* y, ThreadPool* pool) {
  ForRanges(pool, rows, 2 * width, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      kernels::RmsNorm(x + r * width, weight, width, eps, y + r * width);
    }
  });
}

void AddRows(float* x, const float* y, int64_t rows, int64_t width, ThreadPool* pool) {
  ForRanges(pool, rows, width, [&](int64_t r0, int64_t r1) {
    kernels::Axpy(1.0f, y + r0 * width, (r1 - r0) * width, x + r0 * width);
  });
}

void Linear(const kernels::MatrixView& w, const float* bias, const float* x, int64_t n_tokens,
            float* y, ThreadPool* pool) {
  if (n_tokens == 1) {
    kernels::MatVec(w, x, y, pool);
  } else {
    kernels::MatMul(w, x, n_tokens, y, pool);
  }
  AddBias(bias, n_tokens, w.n_rows, y);
}

void AddBias(const float* bias, int64_t n_tokens, int64_t n_rows, float* y) {
  if (bias == nullptr) return;
  for (int64_t t = 0; t < n_tokens; ++t) kernels::Axpy(1.0f, bias, n_rows, y + t * n_rows);
}

void Project(const float* x, int64_t n_tokens, std::initializer_list<Projection> projections,
             ThreadPool* pool) {
  thread_local std::vector<kernels::MatMulJob> jobs;
  jobs.clear();
  for (const Projection& p : projections) {
    jobs.push_back({p.w, x, n_tokens, p.y, nullptr, p.rows_done, p.row_align});
  }
  kernels::MatMuls(jobs, pool);
}

void AttendOverCache(const HParams& hp, int layer, const float* q, const float* k,
                     const float* v, int64_t n_tokens, state::SequenceState* state, float* out,
                     ThreadPool* pool) {
  const int64_t first_pos = state->num_tokens();
  kernels::StoreKeyRows(k, first_pos, n_tokens, state->layout().key_shape(),
                        state->key_rows(layer));
  kernels::StoreValueRows(v, first_pos, n_tokens, state->layout().value_shape(),
                          state->value_rows(layer));
  kernels::AttentionArgs args;
  args.q = q;
  args.k_cache = state->key_rows(layer);
  args.k_tiles_wanted = state->layout().tile_keys;
  args.v_cache = state->value_rows(layer);
  args.v_spans_wanted = state->layout().span_values;
  args.k_dtype = state->layout().k_dtype;
  args.v_dtype = state->layout().v_dtype;
  args.n_tokens = n_tokens;
  args.n_heads = hp.n_head;
  args.n_kv_heads = hp.n_head_kv;
  args.head_dim = hp.head_dim;
  args.first_pos = first_pos;
  args.scale = 1.0f / std::sqrt(static_cast<float>(hp.head_dim));
  args.out = out;
  kernels::Attention(args, pool);
}

void SwiGluFfn(const FfnWeights& w, const float* x, int64_t n_tokens, float* gate_buf,
               float* up_buf, float* out, ThreadPool* pool) {
  Project(x, n_tokens, {{w.gate, gate_buf}, {w.up, up_buf}}, pool);
  const int64_t n_ff = w.gate.n_rows;
  ForRanges(pool, n_tokens, n_ff, [&](int64_t t0, int64_t t1) {
    float* gate = gate_buf + t0 * n_ff;
    kernels::SwiGlu(gate, up_buf + t0 * n_ff, (t1 - t0) * n_ff, gate);
  });
  Linear(w.down, nullptr, gate_buf, n_tokens, out, pool);
}

}  // namespace ds::model
