#include "kernels/gated_delta.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "base/check.h"

namespace ds::kernels {
namespace {

// The hot loops are plain contiguous loops left to the auto-vectoriser. The library is built for
// the baseline ISA, so the functions holding them are cloned per ISA and the loader picks one at
// start (ifunc); small helpers are always inlined into each clone.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define DS_ISA_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define DS_ISA_CLONES
#endif

void RunParallel(ThreadPool* pool, int64_t n, int64_t grain,
                 const std::function<void(int64_t, int64_t)>& fn) {
  if (pool == nullptr) {
    fn(0, n);
  } else {
    pool->ParallelFor(n, grain, fn);
  }
}

[[gnu::always_inline]] inline float Silu(float x) { return x / (1.0f + std::exp(-x)); }

// y[0, n) += a * x[0, n)
[[gnu::always_inline]] inline void AxpyRow(float a, const float* __restrict x, int64_t n,
                                           float* __restrict y) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

// ---------------------------------------------------------------------------------------------
// Causal conv1d

// Channels per conv task: the per-block taps and window stay in registers/L1.
constexpr int64_t kConvBlock = 64;

// Runs channels [c0, c0 + width) over all tokens. Reads a token's inputs into the window before
// writing its outputs, which is what makes out == x safe.
DS_ISA_CLONES
void ConvBlock(const float* x, int64_t n_tokens, int64_t channels, const float* w,
               int64_t kernel_size, float* state, float* out, int64_t c0, int64_t width) {
  const int64_t hist = kernel_size - 1;
  float taps[kMaxConvKernelSize][kConvBlock];
  float window[kMaxConvKernelSize][kConvBlock];  // window[i]: input at t - hist + i
  for (int64_t c = 0; c < width; ++c) {
    for (int64_t i = 0; i < kernel_size; ++i) taps[i][c] = w[(c0 + c) * kernel_size + i];
  }
  for (int64_t i = 0; i < hist; ++i) {
    std::copy_n(state + i * channels + c0, width, window[i]);
  }
  float acc[kConvBlock];
  for (int64_t t = 0; t < n_tokens; ++t) {
    const float* xt = x + t * channels + c0;
    for (int64_t c = 0; c < width; ++c) acc[c] = taps[hist][c] * xt[c];
    for (int64_t i = 0; i < hist; ++i) {
      for (int64_t c = 0; c < width; ++c) acc[c] += taps[i][c] * window[i][c];
    }
    for (int64_t i = 0; i + 1 < hist; ++i) std::copy_n(window[i + 1], width, window[i]);
    if (hist > 0) std::copy_n(xt, width, window[hist - 1]);
    float* ot = out + t * channels + c0;
    for (int64_t c = 0; c < width; ++c) ot[c] = Silu(acc[c]);
  }
  for (int64_t i = 0; i < hist; ++i) {
    std::copy_n(window[i], width, state + i * channels + c0);
  }
}

// Register tiles are written with GCC/Clang vector types: the auto-vectoriser otherwise
// vectorises the matrix products along the reduction with strided gathers, or keeps accumulators
// in memory. Each clone lowers a Vec16 to one zmm, two ymm or four xmm registers.
typedef float Vec16 __attribute__((vector_size(64)));
constexpr int64_t kTileCols = 16;

// ---------------------------------------------------------------------------------------------
// Gated delta rule. Per value head, m is S^T: m[j][i] = S[i][j], dk rows of dv floats.

void CheckArgs(const GatedDeltaArgs& a) {
  DS_CHECK(a.n_tokens >= 0);
  DS_CHECK(a.num_k_heads > 0 && a.num_v_heads > 0 && a.head_dim_k > 0 && a.head_dim_v > 0);
  DS_CHECK(a.num_v_heads % a.num_k_heads == 0);
  DS_CHECK(a.q_stride >= a.num_k_heads * a.head_dim_k);
  DS_CHECK(a.k_stride >= a.num_k_heads * a.head_dim_k);
  DS_CHECK(a.v_stride >= a.num_v_heads * a.head_dim_v);
  DS_CHECK(a.state != nullptr && a.out != nullptr);
  DS_CHECK(a.n_tokens == 0 || (a.q != nullptr && a.k != nullptr && a.v != nullptr &&
                               a.g != nullptr && a.beta != nullptr));
}

// One token of one value head. Column x of m (= row x of S) evolves on its own given k, q, v[x]:
//   d = beta (v[x] - decay k^T m[:, x]);  m[:, x] = decay m[:, x] + d k;  o[x] = q^T m[:, x]
// so the columns are processed in independent groups.
struct RecurrentToken {
  const float* q;  // [dk]
  const float* k;  // [dk]
  const float* v;  // [dv]
  float decay;     // e^g
  float beta;
  float* o;  // [dv]
};

// Columns [x0, x0 + kTileCols) of m in registers; four partial sums over the rows break the
// FMA latency chain.
[[gnu::always_inline]] inline void RecurrentTile(const RecurrentToken& tok, int64_t dk, int64_t dv,
                                                 int64_t x0, float* m) {
  constexpr int64_t kParts = 4;
  Vec16 part[kParts] = {};
  Vec16 mj;
  int64_t j = 0;
  for (; j + kParts <= dk; j += kParts) {
    for (int64_t u = 0; u < kParts; ++u) {
      __builtin_memcpy(&mj, m + (j + u) * dv + x0, sizeof(Vec16));
      part[u] += tok.k[j + u] * mj;
    }
  }
  for (; j < dk; ++j) {
    __builtin_memcpy(&mj, m + j * dv + x0, sizeof(Vec16));
    part[0] += tok.k[j] * mj;
  }
  Vec16 v;
  __builtin_memcpy(&v, tok.v + x0, sizeof(Vec16));
  const Vec16 d = tok.beta * (v - tok.decay * ((part[0] + part[1]) + (part[2] + part[3])));
  Vec16 out[kParts] = {};
  const auto update = [&](int64_t row, Vec16& acc) {
    __builtin_memcpy(&mj, m + row * dv + x0, sizeof(Vec16));
    mj = tok.decay * mj + tok.k[row] * d;
    __builtin_memcpy(m + row * dv + x0, &mj, sizeof(Vec16));
    acc += tok.q[row] * mj;
  };
  for (j = 0; j + kParts <= dk; j += kParts) {
    for (int64_t u = 0; u < kParts; ++u) update(j + u, out[u]);
  }
  for (; j < dk; ++j) update(j, out[0]);
  const Vec16 o = (out[0] + out[1]) + (out[2] + out[3]);
  __builtin_memcpy(tok.o + x0, &o, sizeof(Vec16));
}

// Columns [x0, dv) one at a time: the tail when dv is not a multiple of kTileCols.
[[gnu::always_inline]] inline void RecurrentColumns(const RecurrentToken& tok, int64_t dk,
                                                    int64_t dv, int64_t x0, float* m) {
  for (int64_t x = x0; x < dv; ++x) {
    float sk = 0.0f;
    for (int64_t j = 0; j < dk; ++j) sk += tok.k[j] * m[j * dv + x];
    const float d = tok.beta * (tok.v[x] - tok.decay * sk);
    float o = 0.0f;
    for (int64_t j = 0; j < dk; ++j) {
      const float updated = tok.decay * m[j * dv + x] + tok.k[j] * d;
      m[j * dv + x] = updated;
      o += tok.q[j] * updated;
    }
    tok.o[x] = o;
  }
}

// All tokens of value head h, one at a time.
DS_ISA_CLONES
void RecurrentHead(const GatedDeltaArgs& a, int64_t h) {
  const int64_t dk = a.head_dim_k;
  const int64_t dv = a.head_dim_v;
  const int64_t hv = a.num_v_heads;
  const int64_t kh = KeyHeadFor(h, a.num_k_heads, hv, a.mapping);
  float* m = a.state + h * dk * dv;
  for (int64_t t = 0; t < a.n_tokens; ++t) {
    const RecurrentToken tok{a.q + t * a.q_stride + kh * dk,
                             a.k + t * a.k_stride + kh * dk,
                             a.v + t * a.v_stride + h * dv,
                             std::exp(a.g[t * hv + h]),
                             a.beta[t * hv + h],
                             a.out + (t * hv + h) * dv};
    int64_t x0 = 0;
    for (; x0 + kTileCols <= dv; x0 += kTileCols) RecurrentTile(tok, dk, dv, x0, m);
    RecurrentColumns(tok, dk, dv, x0, m);
  }
}

// c[rows][cols] += a[rows][depth] * b[depth][cols]; leading dimensions in floats. Tiles of
// kTileRows x kTileCols accumulate in registers, so each load of b feeds kTileRows FMAs instead
// of the one an axpy gets.
constexpr int64_t kTileRows = 4;

template <int64_t kRows>
[[gnu::always_inline]] inline void GemmRowTile(const float* a, int64_t lda, const float* b,
                                               int64_t ldb, float* c, int64_t ldc, int64_t depth,
                                               int64_t cols) {
  int64_t x0 = 0;
  for (; x0 + kTileCols <= cols; x0 += kTileCols) {
    Vec16 acc[kRows];
    for (int64_t r = 0; r < kRows; ++r) __builtin_memcpy(&acc[r], c + r * ldc + x0, sizeof(Vec16));
    for (int64_t l = 0; l < depth; ++l) {
      Vec16 bl;
      __builtin_memcpy(&bl, b + l * ldb + x0, sizeof(Vec16));
      for (int64_t r = 0; r < kRows; ++r) acc[r] += a[r * lda + l] * bl;
    }
    for (int64_t r = 0; r < kRows; ++r) __builtin_memcpy(c + r * ldc + x0, &acc[r], sizeof(Vec16));
  }
  if (x0 == cols) return;
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t l = 0; l < depth; ++l) {
      AxpyRow(a[r * lda + l], b + l * ldb + x0, cols - x0, c + r * ldc + x0);
    }
  }
}

[[gnu::always_inline]] inline void GemmAcc(const float* a, int64_t lda, const float* b, int64_t ldb,
                                           float* c, int64_t ldc, int64_t rows, int64_t depth,
                                           int64_t cols) {
  int64_t r = 0;
  for (; r + kTileRows <= rows; r += kTileRows) {
    GemmRowTile<kTileRows>(a + r * lda, lda, b, ldb, c + r * ldc, ldc, depth, cols);
  }
  for (; r < rows; ++r) GemmRowTile<1>(a + r * lda, lda, b, ldb, c + r * ldc, ldc, depth, cols);
}

// Scratch of one head task for the chunked form; sized once per call.
struct ChunkScratch {
  ChunkScratch(int64_t dk, int64_t dv)
      : buffer(static_cast<size_t>(kC * (dk + dv + 2 * kC + 3))),
        kt(buffer.data()),
        vp(kt + dk * kC),
        a(vp + kC * dv),
        p(a + kC * kC),
        gamma(p + kC * kC),
        decay_in(gamma + kC),
        decay_out(decay_in + kC) {}

  static constexpr int64_t kC = kDeltaChunkSize;
  std::vector<float> buffer;
  float* kt;         // [dk][C] keys transposed (then scaled by decay_out)
  float* vp;         // [C][dv] right-hand side R, then V' = (I + A)^-1 R
  float* a;          // [C][C] -A: -beta_i (k_i . k_l) e^(gamma_i - gamma_l) for l < i, else 0
  float* p;          // [C][C] (q_i . k_l) e^(gamma_i - gamma_l) for l <= i, else 0
  float* gamma;      // [C] cumulative log decay inside the chunk
  float* decay_in;   // [C] e^gamma_i: decay of the incoming state up to token i
  float* decay_out;  // [C] e^(gamma_last - gamma_l): decay from token l to the chunk end
};

// Rows of the forward substitution solved together; the rows above a block enter it as one
// matrix product.
constexpr int64_t kSolveBlock = 16;

// The chunk's keys and queries, read in place: row i of key head kh at k + i * k_stride.
struct ChunkKeys {
  const float* k;
  const float* q;
  int64_t k_stride;
  int64_t q_stride;
};

// Transposes the chunk's keys and accumulates the decays.
[[gnu::always_inline]] inline void GatherChunk(const GatedDeltaArgs& a, int64_t h,
                                               const ChunkKeys& in, int64_t t0, int64_t c,
                                               ChunkScratch& s) {
  const int64_t dk = a.head_dim_k;
  const int64_t kC = ChunkScratch::kC;
  float cumulative = 0.0f;
  for (int64_t i = 0; i < c; ++i) {
    for (int64_t j = 0; j < dk; ++j) s.kt[j * kC + i] = in.k[i * in.k_stride + j];
    cumulative += a.g[(t0 + i) * a.num_v_heads + h];
    s.gamma[i] = cumulative;
    s.decay_in[i] = std::exp(cumulative);
  }
  for (int64_t i = 0; i < c; ++i) s.decay_out[i] = std::exp(cumulative - s.gamma[i]);
}

// Fills s.a and s.p for rows [0, c): the key-key and query-key products of the chunk, gated by
// the decay between the two tokens and masked to the causal part.
[[gnu::always_inline]] inline void ChunkGramMatrices(const GatedDeltaArgs& a, int64_t h,
                                                     const ChunkKeys& in, int64_t t0, int64_t c,
                                                     ChunkScratch& s) {
  const int64_t dk = a.head_dim_k;
  const int64_t kC = ChunkScratch::kC;
  std::fill_n(s.a, c * kC, 0.0f);
  std::fill_n(s.p, c * kC, 0.0f);
  // A row tile needs the columns up to its last row, rounded up to whole vectors (kt's columns
  // past c hold finite stale keys; the masking below clears what they produce).
  for (int64_t i0 = 0; i0 < c; i0 += kTileRows) {
    const int64_t rows = std::min(kTileRows, c - i0);
    const int64_t cols = std::min(kC, (i0 + rows + kTileCols - 1) / kTileCols * kTileCols);
    GemmAcc(in.k + i0 * in.k_stride, in.k_stride, s.kt, kC, s.a + i0 * kC, kC, rows, dk, cols);
    GemmAcc(in.q + i0 * in.q_stride, in.q_stride, s.kt, kC, s.p + i0 * kC, kC, rows, dk, cols);
  }
  for (int64_t i = 0; i < c; ++i) {
    float* ai = s.a + i * kC;
    float* pi = s.p + i * kC;
    const float beta = a.beta[(t0 + i) * a.num_v_heads + h];
    for (int64_t l = 0; l < i; ++l) {
      const float gate = std::exp(s.gamma[i] - s.gamma[l]);
      ai[l] *= -beta * gate;
      pi[l] *= gate;
    }
    std::fill(ai + i, ai + kC, 0.0f);
    std::fill(pi + i + 1, pi + kC, 0.0f);
  }
}

// V' = (I + A)^-1 R in place in s.vp by blocked forward substitution, and the intra-chunk part
// of the output, O += P V', for the out rows of the chunk (stride ldo).
[[gnu::always_inline]] inline void SolveAndReadOut(int64_t c, int64_t dv, float* out, int64_t ldo,
                                                   ChunkScratch& s) {
  const int64_t kC = ChunkScratch::kC;
  for (int64_t i0 = 0; i0 < c; i0 += kSolveBlock) {
    const int64_t rows = std::min(kSolveBlock, c - i0);
    GemmAcc(s.a + i0 * kC, kC, s.vp, dv, s.vp + i0 * dv, dv, rows, i0, dv);
    for (int64_t i = i0 + 1; i < i0 + rows; ++i) {
      for (int64_t l = i0; l < i; ++l) AxpyRow(s.a[i * kC + l], s.vp + l * dv, dv, s.vp + i * dv);
    }
    GemmAcc(s.p + i0 * kC, kC, s.vp, dv, out + i0 * ldo, ldo, rows, i0 + rows, dv);
  }
}

// One chunk of value head h: outputs for tokens [t0, t0 + c) and the state update of m.
DS_ISA_CLONES
void ChunkStep(const GatedDeltaArgs& a, int64_t h, int64_t t0, int64_t c, float* m,
               ChunkScratch& s) {
  const int64_t dk = a.head_dim_k;
  const int64_t dv = a.head_dim_v;
  const int64_t hv = a.num_v_heads;
  const int64_t kC = ChunkScratch::kC;
  const int64_t kh = KeyHeadFor(h, a.num_k_heads, hv, a.mapping);
  const ChunkKeys in{a.k + t0 * a.k_stride + kh * dk, a.q + t0 * a.q_stride + kh * dk, a.k_stride,
                     a.q_stride};
  GatherChunk(a, h, in, t0, c, s);
  ChunkGramMatrices(a, h, in, t0, c, s);
  // The incoming state's part: R_i = beta_i (v_i - e^gamma_i m^T k_i), O_i = e^gamma_i m^T q_i.
  float* out = a.out + (t0 * hv + h) * dv;
  const int64_t ldo = hv * dv;
  std::fill_n(s.vp, c * dv, 0.0f);
  for (int64_t i = 0; i < c; ++i) std::fill_n(out + i * ldo, dv, 0.0f);
  GemmAcc(in.k, in.k_stride, m, dv, s.vp, dv, c, dk, dv);
  GemmAcc(in.q, in.q_stride, m, dv, out, ldo, c, dk, dv);
  for (int64_t i = 0; i < c; ++i) {
    float* ri = s.vp + i * dv;
    float* oi = out + i * ldo;
    const float* vi = a.v + (t0 + i) * a.v_stride + h * dv;
    const float beta = a.beta[(t0 + i) * hv + h];
    const float decay = s.decay_in[i];
    for (int64_t x = 0; x < dv; ++x) {
      ri[x] = beta * (vi[x] - decay * ri[x]);
      oi[x] *= decay;
    }
  }
  SolveAndReadOut(c, dv, out, ldo, s);
  // m = e^gamma_last m + sum_l e^(gamma_last - gamma_l) k_l V'_l^T.
  const float chunk_decay = s.decay_in[c - 1];
  for (int64_t j = 0; j < dk; ++j) {
    for (int64_t l = 0; l < c; ++l) s.kt[j * kC + l] *= s.decay_out[l];
  }
  for (int64_t x = 0; x < dk * dv; ++x) m[x] *= chunk_decay;
  GemmAcc(s.kt, kC, s.vp, dv, m, dv, dk, c, dv);
}

}  // namespace

void CausalConv1dSilu(const float* x, int64_t n_tokens, int64_t channels, const float* w,
                      int64_t kernel_size, float* state, float* out, ThreadPool* pool) {
  DS_CHECK(kernel_size >= 1 && kernel_size <= kMaxConvKernelSize);
  DS_CHECK(n_tokens >= 0 && channels >= 0);
  const int64_t num_blocks = (channels + kConvBlock - 1) / kConvBlock;
  // Aim for at least ~8k multiply-adds per task so decode does not pay for waking threads.
  const int64_t grain =
      std::max<int64_t>(1, 8192 / (std::max<int64_t>(n_tokens, 1) * kConvBlock * kernel_size));
  RunParallel(pool, num_blocks, grain, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const int64_t c0 = b * kConvBlock;
      ConvBlock(x, n_tokens, channels, w, kernel_size, state, out, c0,
                std::min(kConvBlock, channels - c0));
    }
  });
}

void GatedDeltaRecurrent(const GatedDeltaArgs& args, ThreadPool* pool) {
  CheckArgs(args);
  if (args.n_tokens == 0) return;
  RunParallel(pool, args.num_v_heads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t h = begin; h < end; ++h) RecurrentHead(args, h);
  });
}

void GatedDeltaChunked(const GatedDeltaArgs& args, ThreadPool* pool) {
  CheckArgs(args);
  if (args.n_tokens == 0) return;
  RunParallel(pool, args.num_v_heads, 1, [&](int64_t begin, int64_t end) {
    ChunkScratch scratch(args.head_dim_k, args.head_dim_v);
    // Chunk-major so one chunk's input rows stay in cache while every head of the task reads them.
    for (int64_t t0 = 0; t0 < args.n_tokens; t0 += kDeltaChunkSize) {
      const int64_t c = std::min(kDeltaChunkSize, args.n_tokens - t0);
      for (int64_t h = begin; h < end; ++h) {
        ChunkStep(args, h, t0, c, args.state + h * args.head_dim_k * args.head_dim_v, scratch);
      }
    }
  });
}

void L2NormalizeHeads(float* x, int64_t n_heads, int64_t head_dim, float eps, float scale) {
  for (int64_t h = 0; h < n_heads; ++h) {
    float* xh = x + h * head_dim;
    float sum_sq = 0.0f;
    for (int64_t i = 0; i < head_dim; ++i) sum_sq += xh[i] * xh[i];
    const float factor = scale / std::max(std::sqrt(sum_sq), eps);
    for (int64_t i = 0; i < head_dim; ++i) xh[i] *= factor;
  }
}

void GatedRmsNorm(float* o, const float* z, const float* weight, int64_t n_heads, int64_t head_dim,
                  float eps) {
  for (int64_t h = 0; h < n_heads; ++h) {
    float* oh = o + h * head_dim;
    const float* zh = z + h * head_dim;
    float sum_sq = 0.0f;
    for (int64_t i = 0; i < head_dim; ++i) sum_sq += oh[i] * oh[i];
    const float inv_rms = 1.0f / std::sqrt(sum_sq / static_cast<float>(head_dim) + eps);
    for (int64_t i = 0; i < head_dim; ++i) oh[i] = oh[i] * inv_rms * weight[i] * Silu(zh[i]);
  }
}

}  // namespace ds::kernels
