// Scalar reference implementations of every kernel in kernels.h: the oracle the optimised paths
// are tested against. Written for clarity, not speed: matrices are dequantised with
// tensor::DequantizeRow and reductions accumulate in double. Not used by model code.
// Thread safety: pure functions.
#pragma once

#include <cstdint>

#include "kernels/kernels.h"

namespace ds::kernels::ref {

// y[n_tokens][n_rows] = x[n_tokens][n_cols] * W^T.
void MatMul(const MatrixView& w, const float* x, int64_t n_tokens, float* y);
void RmsNorm(const float* x, const float* weight, int64_t n, float eps, float* y);
void Rope(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, int64_t pos, float freq_base,
          RopeStyle style);
// Two-pass softmax attention in double precision.
void Attention(const AttentionArgs& args);
void SwiGlu(const float* gate, const float* up, int64_t n, float* out);
void Softmax(float* x, int64_t n);
void TopK(const float* x, int64_t n, int64_t k, int32_t* indices);
float Dot(const float* a, const float* b, int64_t n);
void Axpy(float a, const float* x, int64_t n, float* y);

}  // namespace ds::kernels::ref
