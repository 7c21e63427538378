// Compute kernels used by the model code. Each has a scalar reference in ref/ and optimised paths
// (AVX2, AVX-512; ARM runs the portable table) selected once at run time for the CPU; tests hold
// every path to its reference. Model code calls only this header and never includes intrinsics.
// Thread safety: stateless; functions taking a ThreadPool split work across it and return when
// done (a null pool runs on the calling thread). Results do not depend on the thread count.
// Precision: MatVec/MatMul on quantised weights quantise the activations to int8 (one scale per
// 32 or 256 values) and use integer block dot products: about 1e-2 relative error against an f32
// reference; float weights accumulate in f32.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "base/thread_pool.h"
#include "tensor/dtype.h"
#include "tensor/key_tiles.h"
#include "tensor/value_spans.h"

namespace ds::kernels {

// A weight matrix as stored in GGUF: n_rows rows of n_cols elements of `type`, or, once
// InterleaveRows rewrote it, the same bytes in groups of rows laid out for the active table.
struct MatrixView {
  const void* data = nullptr;
  tensor::DType type = tensor::DType::kF32;
  int64_t n_rows = 0;
  int64_t n_cols = 0;  // multiple of the dtype's block size
  int64_t row_bytes = 0;
  // Rows interleaved in groups (InterleaveRows): row(r) is then the start of a group only.
  bool interleaved = false;

  const uint8_t* row(int64_t r) const { return static_cast<const uint8_t*>(data) + r * row_bytes; }
};

// Whether the active table multiplies w faster with its rows interleaved (Q4_K, Q5_K and Q6_K on
// AVX-512 VNNI, rows in whole groups of 16, no padding between rows).
bool CanInterleaveRows(const MatrixView& w);
// Rewrites w's bytes at `data` (w.data, which the caller may write and nothing else reads as
// rows) into the active table's interleaved layout, in place, and returns the view that reads
// them. MatVec and friends give each row the same result either way only to within rounding:
// the interleaved kernels take fewer float steps. REQUIRES: CanInterleaveRows(w).
MatrixView InterleaveRows(const MatrixView& w, uint8_t* data);

// Name of the instruction set the dispatcher picked ("avx512", "avx2", "scalar"; ARM builds use
// the portable "scalar" table). The environment variable DS_KERNELS_ISA=scalar|avx2|avx512,
// read on first use, forces a path the CPU supports.
std::string_view ActiveIsa();

// y[n_rows] = W x[n_cols].
void MatVec(const MatrixView& w, const float* x, float* y, ThreadPool* pool);
// y[n_tokens][n_rows] = x[n_tokens][n_cols] * W^T.
void MatMul(const MatrixView& w, const float* x, int64_t n_tokens, float* y, ThreadPool* pool);

// Independent products y_j[n_j][w_j.n_rows] = x_j[n_j][w_j.n_cols] * W_j^T in one parallel
// pass over all the jobs' rows: a layer's experts (each with its own tokens), or the projections
// of one input, would otherwise pay a fork and join of the pool per matrix, and each input is
// encoded once for all the jobs that read it. The rows are split by multiply-adds, so a job of
// many tokens gets more tasks than one of few. Each y_j equals what MatMul gives.
struct MatMulJob {
  MatrixView w;
  const float* x = nullptr;
  int64_t n_tokens = 0;  // n_j, the rows of x_j and y_j
  float* y = nullptr;
  // When set, row t of x_j is row x_rows[t] of x (x_rows holds n_j indices): a MoE layer's
  // experts read their tokens' rows of the layer's input, which is then encoded once for all.
  const int64_t* x_rows = nullptr;
  // When set, called with each range [r0, r1) of W_j's rows once y_j's columns r0 .. r1 - 1 are
  // final for every token, on the thread that computed them and within the pass; every row is in
  // exactly one range, and r0 and r1 are multiples of row_align (or r1 = n_rows). Work that
  // follows the product row by row (a conv over channels, a norm per head) then runs on both
  // threads on data in their own caches, not on the calling thread alone between passes.
  const FunctionRef<void(int64_t, int64_t)>* rows_done = nullptr;
  int64_t row_align = 1;
};
void MatMuls(std::span<const MatMulJob> jobs, ThreadPool* pool);

// y = x / sqrt(mean(x^2) + eps) * weight (weight may be null: no scaling). y may alias x.
void RmsNorm(const float* x, const float* weight, int64_t n, float eps, float* y);

enum class RopeStyle {
  kNorm,  // rotates pairs (2i, 2i+1)
  kNeox,  // rotates pairs (i, i + n_rot/2)
};
// Rotates the first n_rot dims of each of n_heads heads in x[n_heads][head_dim] in place, for
// position pos: theta_i = pos * freq_base^(-2i/n_rot).
void Rope(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, int64_t pos,
          float freq_base, RopeStyle style);

// Causal softmax attention of a block of new tokens over a KV cache that already holds them.
// Query head h reads kv head h / (n_heads / n_kv_heads).
struct AttentionArgs {
  const float* q = nullptr;       // [n_tokens][n_heads * head_dim]
  // K of positions [0, first_pos + n_tokens) as StoreKeyRows writes them (tensor/key_tiles.h:
  // tiled where KeyShapeOf(*this).tiled(), rows of n_kv_heads * head_dim otherwise).
  const void* k_cache = nullptr;
  bool k_tiles_wanted = false;  // the K cache's KeyShape::tiles_wanted
  // V of the same positions as StoreValueRows writes them (tensor/value_spans.h: in spans where
  // ValueShapeOf(*this).spanned(), rows of n_kv_heads * head_dim otherwise).
  const void* v_cache = nullptr;
  bool v_spans_wanted = false;  // the V cache's ValueShape::spans_wanted
  // The K rows' element type: kF32, or kQ8_0 (then head_dim % 32 == 0); the V rows': kF32,
  // kQ8_0 or kQ4_0 (then head_dim % 32 == 0). Quantised rows are read as their exact dequantised
  // values, so the result equals f32 attention over those values.
  tensor::DType k_dtype = tensor::DType::kF32;
  tensor::DType v_dtype = tensor::DType::kF32;
  int64_t n_tokens = 0;
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t first_pos = 0;  // token i attends to cache positions [0, first_pos + i]
  float scale = 1.0f;
  float* out = nullptr;  // [n_tokens][n_heads * head_dim]
};
void Attention(const AttentionArgs& args, ThreadPool* pool);

// The layout of args.k_cache.
tensor::KeyShape KeyShapeOf(const AttentionArgs& args);
// Whether the active table reads K caches faster as tiles (KeyShape::tiles_wanted): it scores
// them in int8. Others read tiled caches too, gathering each position's slices.
bool PrefersTiledKeys();
// The layout of args.v_cache.
tensor::ValueShape ValueShapeOf(const AttentionArgs& args);
// Whether the active table reads V caches faster in spans (ValueShape::spans_wanted): it sums
// them in integers. Others read spans too, gathering each position's slices.
bool PrefersValueSpans();

// Writes K rows k[n_tokens][n_kv_heads * head_dim] as positions [first_pos, first_pos +
// n_tokens) of a K cache of `shape` (room for shape.CacheBytes(first_pos + n_tokens) bytes).
void StoreKeyRows(const float* k, int64_t first_pos, int64_t n_tokens,
                  const tensor::KeyShape& shape, uint8_t* cache);
// The same for V rows and a V cache.
void StoreValueRows(const float* v, int64_t first_pos, int64_t n_tokens,
                    const tensor::ValueShape& shape, uint8_t* cache);

// out = silu(gate) * up, elementwise. out may alias either input.
void SwiGlu(const float* gate, const float* up, int64_t n, float* out);
// x = x / (1 + e^-x), in place.
void Silu(float* x, int64_t n);

// x[i] *= sigmoid(gate[i]) for i < n: gated attention's output gate.
void SigmoidGate(float* x, const float* gate, int64_t n);
// In place, numerically stable.
void Softmax(float* x, int64_t n);
// Indices of the k largest values, largest first (ties: lower index first). REQUIRES: k <= n.
void TopK(const float* x, int64_t n, int64_t k, int32_t* indices);
float Dot(const float* a, const float* b, int64_t n);
// y += a * x
void Axpy(float a, const float* x, int64_t n, float* y);

// The float multiply-add throughput of the selected kernel table on the pool's threads, in
// GFLOPS (a multiply-add counts two): the ceiling prefill figures are compared with.
double MeasureFmaPeakGflops(ThreadPool* pool);
// The int8 dot-product throughput of the selected table's quantised matrix kernels' widest step
// (vpdpbusd, maddubs, SDOT) on the pool's threads, in GOPS (a multiply-add counts two), or 0 for
// the portable table: the ceiling of prefill in quantised weights, whose activations are int8.
double MeasureInt8DotPeakGops(ThreadPool* pool);

}  // namespace ds::kernels
