#include "kernels/gated_delta.h"

#include <algorithm>
#include <cmath>

#include "base/check.h"
#include "kernels/kernels.h"

namespace ds::kernels {
namespace {

// The hot loops are plain contiguous loops (the conv) or GCC vector types (the recurrence's
// register tiles). The library is built for the baseline ISA, so the functions holding them are
// cloned per ISA and the loader picks one at start (ifunc); small helpers are always inlined into
// each clone.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define DS_ISA_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define DS_BELOW_V4_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#define DS_HAS_V4_TARGET 1
#else
#define DS_ISA_CLONES
#define DS_BELOW_V4_CLONES
#define DS_HAS_V4_TARGET 0
#endif

// ---------------------------------------------------------------------------------------------
// Causal conv1d

// Channels per conv task: the per-block taps and window stay in registers/L1.
constexpr int64_t kConvBlock = kConvChannelAlign;

// Runs channels [c0, c0 + width) over all tokens. Reads a token's inputs into the window before
// writing its outputs, which is what makes out == x safe.
DS_ISA_CLONES
void ConvBlock(const float* x, int64_t n_tokens, int64_t channels, const float* w,
               int64_t kernel_size, float* state, float* out, int64_t c0, int64_t width) {
  const int64_t hist = kernel_size - 1;
  float taps[kMaxConvKernelSize][kConvBlock];
  float window[kMaxConvKernelSize][kConvBlock];  // window[i]: input at t - hist + i
  for (int64_t i = 0; i < kernel_size; ++i) std::copy_n(w + i * channels + c0, width, taps[i]);
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
    std::copy_n(acc, width, ot);
    // The table's vector exp: std::exp per value was half of the conv's time in a prefill.
    Silu(ot, width);
  }
  for (int64_t i = 0; i < hist; ++i) {
    std::copy_n(window[i], width, state + i * channels + c0);
  }
}

// The recurrence's register tiles are written with GCC/Clang vector types: the auto-vectoriser
// otherwise vectorises along the reduction over the state's rows, or keeps the accumulators in
// memory. Each clone lowers a Vec8 to one ymm or two xmm registers. Tiles of 16 columns (64-byte
// vectors) were 3-4x slower (512 tokens: 18.1-22.1 ms against 6.9; one token: 44 against 11 us
// on 2 threads): GCC 12 moved them through the stack in the AVX2 clone. AVX-512, with 32
// registers of 64 bytes, takes them (RecurrentHead).
typedef float Vec8 __attribute__((vector_size(32)));
typedef float Vec16 __attribute__((vector_size(64)));

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

// Columns [x0, x0 + the Vec's lanes) of m in registers; four partial sums over the rows break the
// FMA latency chain.
template <class Vec>
[[gnu::always_inline]] inline void RecurrentTile(const RecurrentToken& tok, int64_t dk, int64_t dv,
                                                 int64_t x0, float* m) {
  constexpr int64_t kParts = 4;
  Vec part[kParts] = {};
  Vec mj;
  int64_t j = 0;
  for (; j + kParts <= dk; j += kParts) {
    for (int64_t u = 0; u < kParts; ++u) {
      __builtin_memcpy(&mj, m + (j + u) * dv + x0, sizeof(Vec));
      part[u] += tok.k[j + u] * mj;
    }
  }
  for (; j < dk; ++j) {
    __builtin_memcpy(&mj, m + j * dv + x0, sizeof(Vec));
    part[0] += tok.k[j] * mj;
  }
  Vec v;
  __builtin_memcpy(&v, tok.v + x0, sizeof(Vec));
  const Vec d = tok.beta * (v - tok.decay * ((part[0] + part[1]) + (part[2] + part[3])));
  Vec out[kParts] = {};
  const auto update = [&](int64_t row, Vec& acc) {
    __builtin_memcpy(&mj, m + row * dv + x0, sizeof(Vec));
    mj = tok.decay * mj + tok.k[row] * d;
    __builtin_memcpy(m + row * dv + x0, &mj, sizeof(Vec));
    acc += tok.q[row] * mj;
  };
  for (j = 0; j + kParts <= dk; j += kParts) {
    for (int64_t u = 0; u < kParts; ++u) update(j + u, out[u]);
  }
  for (; j < dk; ++j) update(j, out[0]);
  const Vec o = (out[0] + out[1]) + (out[2] + out[3]);
  __builtin_memcpy(tok.o + x0, &o, sizeof(Vec));
}

// Columns [x0, dv) one at a time: the tail when dv is not a multiple of the tile's columns.
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

// All tokens of value head h, one at a time, in tiles of Vec's columns.
template <class Vec>
[[gnu::always_inline]] inline void RecurrentTokens(const GatedDeltaArgs& a, int64_t h) {
  constexpr int64_t kTileCols = sizeof(Vec) / sizeof(float);
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
    for (; x0 + kTileCols <= dv; x0 += kTileCols) RecurrentTile<Vec>(tok, dk, dv, x0, m);
    RecurrentColumns(tok, dk, dv, x0, m);
  }
}

// A CPU of level x86-64-v4 takes tiles of 16 columns, one register there (512 tokens of a
// bench-model layer on 2 threads, medians of three interleaved pairs: 2.98-3.28 -> 2.48-2.58 ms;
// one token 0-15% less); the others keep 8 (see Vec8). A column's arithmetic is the same in
// either tile.
#if DS_HAS_V4_TARGET
__attribute__((target("arch=x86-64-v4"))) void RecurrentHeadWide(const GatedDeltaArgs& a,
                                                                  int64_t h) {
  RecurrentTokens<Vec16>(a, h);
}
#endif

DS_BELOW_V4_CLONES
void RecurrentHeadNarrow(const GatedDeltaArgs& a, int64_t h) { RecurrentTokens<Vec8>(a, h); }

void RecurrentHead(const GatedDeltaArgs& a, int64_t h) {
#if DS_HAS_V4_TARGET
  static const bool wide = __builtin_cpu_supports("x86-64-v4");
  if (wide) return RecurrentHeadWide(a, h);
#endif
  RecurrentHeadNarrow(a, h);
}

// Asks for every cache line of [p, p + bytes), to be written.
void PrefetchForWrite(const void* p, int64_t bytes) {
  const char* first = static_cast<const char*>(p);
  for (int64_t offset = 0; offset < bytes; offset += 64) {
#if defined(__x86_64__)
    asm volatile("prefetchw %0" : : "m"(first[offset]));
#elif defined(__aarch64__)
    asm volatile("prfm pstl2keep, [%0]" : : "r"(first + offset));
#endif
  }
}

}  // namespace

void CausalConv1dSilu(const float* x, int64_t n_tokens, int64_t channels, const float* w,
                      int64_t kernel_size, float* state, float* out, int64_t c0, int64_t c1) {
  DS_CHECK(kernel_size >= 1 && kernel_size <= kMaxConvKernelSize);
  DS_CHECK(n_tokens >= 0 && c0 % kConvBlock == 0 && 0 <= c0 && c0 <= c1 && c1 <= channels);
  for (int64_t c = c0; c < c1; c += kConvBlock) {
    ConvBlock(x, n_tokens, channels, w, kernel_size, state, out, c, std::min(kConvBlock, c1 - c));
  }
}

void GatedDeltaRecurrent(const GatedDeltaArgs& args, ThreadPool* pool) {
  CheckArgs(args);
  if (args.n_tokens == 0) return;
  // Each thread keeps the same heads from call to call, so a head's state (16 KiB for the bench
  // model) is where the thread last wrote it. Handed out first come, heads moved between cores:
  // one token over 16 heads took 10.8 us on two threads against 6.4 on one (gated_delta_bench,
  // state in cache), and 5.8 this way.
  const int64_t threads = std::min<int64_t>(pool != nullptr ? pool->num_threads() : 1,
                                            args.num_v_heads);
  const auto heads_of_thread = [&](int thread) {
    const int64_t h0 = args.num_v_heads * thread / threads;
    const int64_t h1 = args.num_v_heads * (thread + 1) / threads;
    const int64_t head_floats = args.head_dim_k * args.head_dim_v;
    // A decode step's weights have pushed the heads' state out of every cache since this layer
    // last ran; asked for at once, its lines arrive together instead of as the recurrence reaches
    // them. Bench model Q8_0 decode, passes alternating within one process: 19.2-21.7 -> 14.9-15.9
    // us a layer. Asking two heads ahead instead: 16.9-17.3; for the next layer's state during
    // this one: 21.8 (gone from the caches again by then).
    PrefetchForWrite(args.state + h0 * head_floats,
                     (h1 - h0) * head_floats * static_cast<int64_t>(sizeof(float)));
    for (int64_t h = h0; h < h1; ++h) RecurrentHead(args, h);
  };
  if (pool == nullptr) return heads_of_thread(0);
  pool->OnEveryThread([&](int thread) {
    if (thread < threads) heads_of_thread(thread);
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
    RmsNorm(oh, weight, head_dim, eps, oh);
    SwiGlu(z + h * head_dim, oh, head_dim, oh);
  }
}

}  // namespace ds::kernels
