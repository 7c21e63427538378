#include "kernels/ref/gated_delta_ref.h"

#include <cmath>
#include <vector>

namespace ds::kernels::ref {

void CausalConv1dSiluRef(const float* x, int64_t n_tokens, int64_t channels, const float* w,
                         int64_t kernel_size, double* state, double* out) {
  const int64_t hist = kernel_size - 1;
  // Full input history: the state rows followed by the new tokens.
  std::vector<double> in((hist + n_tokens) * channels);
  for (int64_t i = 0; i < hist * channels; ++i) in[i] = state[i];
  for (int64_t i = 0; i < n_tokens * channels; ++i) in[hist * channels + i] = x[i];
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t c = 0; c < channels; ++c) {
      double sum = 0.0;
      for (int64_t i = 0; i < kernel_size; ++i) {
        sum += static_cast<double>(w[c * kernel_size + i]) * in[(t + i) * channels + c];
      }
      out[t * channels + c] = sum / (1.0 + std::exp(-sum));
    }
  }
  for (int64_t i = 0; i < hist * channels; ++i) state[i] = in[n_tokens * channels + i];
}

void GatedDeltaRef(const GatedDeltaArgs& args, double* state, double* out) {
  const int64_t dk = args.head_dim_k;
  const int64_t dv = args.head_dim_v;
  const int64_t hv = args.num_v_heads;
  const int64_t group = hv / args.num_k_heads;
  std::vector<double> sk(dv);
  for (int64_t t = 0; t < args.n_tokens; ++t) {
    for (int64_t h = 0; h < hv; ++h) {
      const int64_t kh = args.mapping == KeyHeadMapping::kTiled ? h % args.num_k_heads : h / group;
      const float* q = args.q + t * args.q_stride + kh * dk;
      const float* k = args.k + t * args.k_stride + kh * dk;
      const float* v = args.v + t * args.v_stride + h * dv;
      const double decay = std::exp(static_cast<double>(args.g[t * hv + h]));
      const double beta = args.beta[t * hv + h];
      // S(i, j) = value dim i, key dim j.
      auto s = [&](int64_t i, int64_t j) -> double& { return state[(h * dk + j) * dv + i]; };
      for (int64_t i = 0; i < dv; ++i) {
        for (int64_t j = 0; j < dk; ++j) s(i, j) *= decay;
      }
      for (int64_t i = 0; i < dv; ++i) {
        double sum = 0.0;
        for (int64_t j = 0; j < dk; ++j) sum += s(i, j) * k[j];
        sk[i] = sum;
      }
      for (int64_t i = 0; i < dv; ++i) {
        const double d = beta * (v[i] - sk[i]);
        for (int64_t j = 0; j < dk; ++j) s(i, j) += d * k[j];
      }
      for (int64_t i = 0; i < dv; ++i) {
        double sum = 0.0;
        for (int64_t j = 0; j < dk; ++j) sum += s(i, j) * q[j];
        out[(t * hv + h) * dv + i] = sum;
      }
    }
  }
}

}  // namespace ds::kernels::ref
