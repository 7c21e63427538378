#include "model/hybrid_layers.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

namespace ds::model {
namespace {

// A decode step's router of at most this many bytes is multiplied on the calling thread, before
// the feed-forward's parallel passes: one thread reads it in less time than the pool's fork and
// join of a pass of its own costs. Bench model (routers of 18 and 34 KiB), decode steps
// alternating with and without every four tokens in one process: 0.972-0.980 as long in Q4_K
// (four runs of 2048 tokens), 0.986-0.988 in Q8_0 (three).
constexpr int64_t kSerialRouterBytes = 64 * 1024;

void Fit(std::vector<float>* buf, int64_t size) {
  if (static_cast<int64_t>(buf->size()) < size) buf->resize(size);
}

}  // namespace

void DeltaNetMixer::Gates(const DeltaNetDims& dims, const DeltaNetWeights& w, int64_t n_tokens,
                          ThreadPool* pool) {
  const int64_t hv = dims.num_v_heads;
  Fit(&beta_, n_tokens * hv);
  Fit(&g_, n_tokens * hv);
  // Rows of a fused projection per key head g: [b for value heads g*r..g*r+r-1 | a for them].
  const int64_t r = hv / dims.num_k_heads;
  ForRanges(pool, n_tokens, 64 * hv, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      for (int64_t h = 0; h < hv; ++h) {
        if (w.fused_ba) {
          const float* group = ba_.data() + t * 2 * hv + (h / r) * 2 * r;
          b_[t * hv + h] = group[h % r];
          a_[t * hv + h] = group[r + h % r];
        }
        beta_[t * hv + h] = kernels::Sigmoid(b_[t * hv + h]);
        g_[t * hv + h] = kernels::Softplus(a_[t * hv + h] + w.dt_bias[h]) * w.ssm_a[h];
      }
    }
  });
}

void DeltaNetMixer::Forward(const DeltaNetDims& dims, const DeltaNetWeights& w, const float* xn,
                            int64_t n_tokens, float* conv_state, float* ssm_state, float* out,
                            ThreadPool* pool) {
  const int64_t conv_dim = dims.conv_dim();
  const int64_t key_dim = dims.key_dim();
  const int64_t dk = dims.head_dim;
  Fit(&mixed_, n_tokens * conv_dim);
  Fit(&z_, n_tokens * dims.value_dim());
  Fit(&o_, n_tokens * dims.value_dim());
  Fit(&b_, n_tokens * dims.num_v_heads);
  Fit(&a_, n_tokens * dims.num_v_heads);
  // The conv and the q and k heads' norms of the qkv rows a task of the projection has just
  // computed, by that task: on the calling thread between passes they took 5.9 us a layer while
  // the other thread waited, and in the higher bandwidth state, whose two vCPUs sit on different
  // CCDs, half of the rows they read came from the other one's cache. Bench model decode steps
  // alternating between the two every four tokens in one process, higher state: Q8_0 0.988-1.002
  // as long (seven runs of 512 tokens, six below 1), Q4_K 0.996; pp512 in alternating binaries
  // 877-884 tok/s against 846-861 (one run of four 784).
  const float q_scale = 1.0f / std::sqrt(static_cast<float>(dk));
  const auto conv_and_norms = [&](int64_t c0, int64_t c1) {
    kernels::CausalConv1dSilu(mixed_.data(), n_tokens, conv_dim, w.conv, dims.conv_kernel,
                              conv_state, mixed_.data(), c0, c1);
    // Whole heads, as the rows come aligned to them: q's in [0, key_dim), k's up to 2 key_dim.
    for (int64_t c = c0; c < std::min(c1, 2 * key_dim); c += dk) {
      const float scale = c < key_dim ? q_scale : 1.0f;
      for (int64_t t = 0; t < n_tokens; ++t) {
        kernels::L2NormalizeHeads(mixed_.data() + t * conv_dim + c, 1, dk, dims.eps, scale);
      }
    }
  };
  const FunctionRef<void(int64_t, int64_t)> conv_rows = conv_and_norms;
  const Projection qkv{w.qkv, mixed_.data(), &conv_rows, std::lcm(dk, kernels::kConvChannelAlign)};
  if (w.fused_ba) {
    Fit(&ba_, n_tokens * 2 * dims.num_v_heads);
    Project(xn, n_tokens, {qkv, {w.gate, z_.data()}, {w.ba, ba_.data()}}, pool);
  } else {
    Project(xn, n_tokens, {qkv, {w.gate, z_.data()}, {w.beta, b_.data()}, {w.alpha, a_.data()}},
            pool);
  }
  Gates(dims, w, n_tokens, pool);

  kernels::GatedDeltaArgs args;
  args.q = mixed_.data();
  args.k = mixed_.data() + key_dim;
  args.v = mixed_.data() + 2 * key_dim;
  args.g = g_.data();
  args.beta = beta_.data();
  args.q_stride = args.k_stride = args.v_stride = conv_dim;
  args.n_tokens = n_tokens;
  args.num_k_heads = dims.num_k_heads;
  args.num_v_heads = dims.num_v_heads;
  args.head_dim_k = dk;
  args.head_dim_v = dk;
  args.mapping = dims.mapping;
  args.state = ssm_state;
  args.out = o_.data();
  kernels::GatedDeltaRecurrent(args, pool);
  ForRanges(pool, n_tokens * dims.num_v_heads, 16 * dk, [&](int64_t h0, int64_t h1) {
    kernels::GatedRmsNorm(o_.data() + h0 * dk, z_.data() + h0 * dk, w.norm, h1 - h0, dk, dims.eps);
  });
  Linear(w.out, nullptr, o_.data(), n_tokens, out, pool);
}

void GatedAttentionMixer::Forward(const HParams& hp, const GatedAttentionWeights& w,
                                  const float* xn, int64_t n_tokens, int layer,
                                  state::SequenceState* state, float* out, ThreadPool* pool) {
  const int64_t hd = hp.head_dim;
  const int64_t q_dim = hp.n_head * hd;
  const int64_t kv_dim = hp.n_head_kv * hd;
  const int64_t first_pos = state->num_tokens();
  Fit(&q_gate_, n_tokens * 2 * q_dim);
  Fit(&q_, n_tokens * q_dim);
  Fit(&k_, n_tokens * kv_dim);
  Fit(&v_, n_tokens * kv_dim);
  Fit(&attn_, n_tokens * q_dim);

  Project(xn, n_tokens, {{w.q, q_gate_.data()}, {w.k, k_.data()}, {w.v, v_.data()}}, pool);
  // Each token's query heads apart from their gates, normed and rotated, and its key heads
  // normed and rotated.
  ForRanges(pool, n_tokens, 8 * (q_dim + kv_dim), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      float* q = q_.data() + t * q_dim;
      float* k = k_.data() + t * kv_dim;
      for (int64_t h = 0; h < hp.n_head; ++h) {
        std::memcpy(q + h * hd, q_gate_.data() + (t * hp.n_head + h) * 2 * hd, hd * sizeof(float));
      }
      RmsNormRows(q, w.q_norm, hp.n_head, hd, hp.rms_eps, q, nullptr);
      RmsNormRows(k, w.k_norm, hp.n_head_kv, hd, hp.rms_eps, k, nullptr);
      kernels::Rope(q, hp.n_head, hd, hp.n_rot, first_pos + t, hp.rope_freq_base,
                    kernels::RopeStyle::kNeox);
      kernels::Rope(k, hp.n_head_kv, hd, hp.n_rot, first_pos + t, hp.rope_freq_base,
                    kernels::RopeStyle::kNeox);
    }
  });
  AttendOverCache(hp, layer, q_.data(), k_.data(), v_.data(), n_tokens, state, attn_.data(), pool);
  ForRanges(pool, n_tokens * hp.n_head, 16 * hd, [&](int64_t h0, int64_t h1) {
    for (int64_t head = h0; head < h1; ++head) {
      kernels::SigmoidGate(attn_.data() + head * hd, q_gate_.data() + head * 2 * hd + hd, hd);
    }
  });
  Linear(w.out, nullptr, attn_.data(), n_tokens, out, pool);
}

void MoeFfn::Route(const HParams& hp, int64_t n_tokens, ThreadPool* pool) {
  const int64_t n_expert = hp.n_expert;
  const int64_t top_k = hp.n_expert_used;
  Fit(&weights_, n_tokens * top_k);
  if (static_cast<int64_t>(chosen_.size()) < n_tokens * top_k) chosen_.resize(n_tokens * top_k);
  ForRanges(pool, n_tokens, 8 * n_expert, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      float* probs = router_logits_.data() + t * n_expert;
      kernels::Softmax(probs, n_expert);
      int32_t* chosen = chosen_.data() + t * top_k;
      kernels::TopK(probs, n_expert, top_k, chosen);
      float sum = 0.0f;
      for (int64_t j = 0; j < top_k; ++j) sum += probs[chosen[j]];
      for (int64_t j = 0; j < top_k; ++j) weights_[t * top_k + j] = probs[chosen[j]] / sum;
    }
  });

  // A stable counting sort of the (token, slot) pairs by expert.
  const int64_t n_pairs = n_tokens * top_k;
  expert_start_.assign(n_expert + 1, 0);
  for (int64_t i = 0; i < n_pairs; ++i) ++expert_start_[chosen_[i] + 1];
  for (int64_t e = 0; e < n_expert; ++e) expert_start_[e + 1] += expert_start_[e];
  if (static_cast<int64_t>(row_of_.size()) < n_pairs) row_of_.resize(n_pairs);
  next_row_.assign(expert_start_.begin(), expert_start_.end() - 1);
  if (static_cast<int64_t>(token_of_row_.size()) < n_pairs) token_of_row_.resize(n_pairs);
  for (int64_t i = 0; i < n_pairs; ++i) {
    row_of_[i] = next_row_[chosen_[i]]++;
    token_of_row_[row_of_[i]] = i / top_k;
  }
}

void MoeFfn::Forward(const HParams& hp, const MoeWeights& w, const float* xn, int64_t n_tokens,
                     float* out, ThreadPool* pool) {
  const int64_t n_embd = hp.n_embd;
  const int64_t top_k = hp.n_expert_used;
  const int64_t n_pairs = n_tokens * top_k;
  const int64_t n_ff = hp.n_ff_expert;
  const int64_t n_ff_shared = hp.n_ff_shared_expert;
  // Routed rows first ([n_pairs][n_ff], grouped by expert), then the shared expert's
  // ([n_tokens][n_ff_shared]).
  const int64_t ff_values = n_pairs * n_ff + n_tokens * n_ff_shared;
  Fit(&gate_buf_, ff_values);
  Fit(&up_buf_, ff_values);
  Fit(&expert_out_, (n_pairs + n_tokens) * n_embd);
  Fit(&router_logits_, n_tokens * hp.n_expert);
  float* shared_gate = gate_buf_.data() + n_pairs * n_ff;
  float* shared_up = up_buf_.data() + n_pairs * n_ff;
  float* shared_out = expert_out_.data() + n_pairs * n_embd;
  const auto run_jobs = [&](ThreadPool* on) {
    kernels::MatMuls(jobs_, on);
    jobs_.clear();
  };
  // The shared expert needs no routing: its gate and up products run in the router's parallel
  // pass, or, after a small router alone, in the routed experts'.
  const bool small_router =
      n_tokens == 1 && w.router.n_rows * w.router.row_bytes <= kSerialRouterBytes;
  jobs_.clear();
  jobs_.push_back({w.router, xn, n_tokens, router_logits_.data()});
  if (small_router) run_jobs(nullptr);
  jobs_.push_back({w.shared.gate, xn, n_tokens, shared_gate});
  jobs_.push_back({w.shared.up, xn, n_tokens, shared_up});
  if (!small_router) run_jobs(pool);
  Route(hp, n_tokens, pool);
  const auto tokens_of = [&](int64_t e) { return expert_start_[e + 1] - expert_start_[e]; };
  // An expert every token chose reads xn whole (always so for one token), the others their
  // tokens' rows of it, in token order.
  const auto rows_of = [&](int64_t e) {
    return tokens_of(e) == n_tokens ? nullptr : token_of_row_.data() + expert_start_[e];
  };

  for (int64_t e = 0; e < hp.n_expert; ++e) {
    if (tokens_of(e) == 0) continue;
    const int64_t first = expert_start_[e];
    jobs_.push_back(
        {w.experts[e].gate, xn, tokens_of(e), gate_buf_.data() + first * n_ff, rows_of(e)});
    jobs_.push_back({w.experts[e].up, xn, tokens_of(e), up_buf_.data() + first * n_ff, rows_of(e)});
  }
  run_jobs(pool);

  const auto ff_row = [&](int64_t r) {
    return r < n_pairs ? r * n_ff : n_pairs * n_ff + (r - n_pairs) * n_ff_shared;
  };
  ForRanges(pool, n_pairs + n_tokens, std::max(n_ff, n_ff_shared), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      float* gate = gate_buf_.data() + ff_row(r);
      kernels::SwiGlu(gate, up_buf_.data() + ff_row(r), r < n_pairs ? n_ff : n_ff_shared, gate);
    }
  });

  for (int64_t e = 0; e < hp.n_expert; ++e) {
    if (tokens_of(e) == 0) continue;
    const int64_t first = expert_start_[e];
    jobs_.push_back({w.experts[e].down, gate_buf_.data() + first * n_ff, tokens_of(e),
                     expert_out_.data() + first * n_embd});
  }
  jobs_.push_back({w.shared.down, shared_gate, n_tokens, shared_out});
  run_jobs(pool);

  // Each token sums its experts in increasing id, then the gated shared expert.
  ForRanges(pool, n_tokens, (top_k + 2) * n_embd, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      float* o = out + t * n_embd;
      std::fill(o, o + n_embd, 0.0f);
      const int32_t* chosen = chosen_.data() + t * top_k;
      for (int32_t last = -1;;) {
        int64_t slot = -1;
        for (int64_t j = 0; j < top_k; ++j) {
          if (chosen[j] > last && (slot < 0 || chosen[j] < chosen[slot])) slot = j;
        }
        if (slot < 0) break;
        last = chosen[slot];
        const int64_t pair = t * top_k + slot;
        kernels::Axpy(weights_[pair], expert_out_.data() + row_of_[pair] * n_embd, n_embd, o);
      }
      const float gate = kernels::Sigmoid(kernels::Dot(w.shared_gate, xn + t * n_embd, n_embd));
      kernels::Axpy(gate, shared_out + t * n_embd, n_embd, o);
    }
  });
}

}  // namespace ds::model
