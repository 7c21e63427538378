#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "kernels/ref/ref.h"
#include "tensor/key_tiles.h"
#include "tensor/quant.h"
#include "tensor/value_spans.h"

namespace ds::kernels::ref {

void RmsNorm(const float* x, const float* weight, int64_t n, float eps, float* y) {
  double sum_sq = 0.0;
  for (int64_t i = 0; i < n; ++i) sum_sq += static_cast<double>(x[i]) * x[i];
  const double scale = 1.0 / std::sqrt(sum_sq / static_cast<double>(n) + eps);
  for (int64_t i = 0; i < n; ++i) {
    y[i] = static_cast<float>(x[i] * scale * (weight != nullptr ? weight[i] : 1.0f));
  }
}

void Rope(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, int64_t pos, float freq_base,
          RopeStyle style) {
  const int64_t half = n_rot / 2;
  for (int64_t h = 0; h < n_heads; ++h) {
    float* head = x + h * head_dim;
    for (int64_t i = 0; i < half; ++i) {
      const double theta =
          static_cast<double>(pos) * std::pow(static_cast<double>(freq_base), -2.0 * i / n_rot);
      const int64_t a = style == RopeStyle::kNorm ? 2 * i : i;
      const int64_t b = style == RopeStyle::kNorm ? 2 * i + 1 : i + half;
      const double x0 = head[a];
      const double x1 = head[b];
      head[a] = static_cast<float>(x0 * std::cos(theta) - x1 * std::sin(theta));
      head[b] = static_cast<float>(x0 * std::sin(theta) + x1 * std::cos(theta));
    }
  }
}

// The cache's first n_rows rows as f32 (quantised rows dequantised).
std::vector<float> KvAsFloats(const void* cache, tensor::DType dtype, int64_t n_rows,
                              int64_t row_floats) {
  std::vector<float> rows(static_cast<size_t>(n_rows * row_floats));
  const int64_t row_bytes = tensor::RowBytes(dtype, row_floats);
  for (int64_t r = 0; r < n_rows; ++r) {
    tensor::DequantizeRow(dtype, static_cast<const uint8_t*>(cache) + r * row_bytes,
                          rows.data() + r * row_floats, row_floats);
  }
  return rows;
}

void Attention(const AttentionArgs& args) {
  const int64_t hd = args.head_dim;
  const int64_t group = args.n_heads / args.n_kv_heads;
  const int64_t kv_stride = args.n_kv_heads * hd;
  const int64_t n_rows = args.first_pos + args.n_tokens;
  const tensor::KeyShape key_shape = KeyShapeOf(args);
  std::vector<uint8_t> key_rows(static_cast<size_t>(n_rows * key_shape.row_bytes()));
  tensor::GetKeyRows(static_cast<const uint8_t*>(args.k_cache), 0, n_rows, key_shape,
                     key_rows.data());
  const std::vector<float> keys = KvAsFloats(key_rows.data(), args.k_dtype, n_rows, kv_stride);
  const tensor::ValueShape value_shape = ValueShapeOf(args);
  std::vector<uint8_t> value_rows(static_cast<size_t>(n_rows * value_shape.row_bytes()));
  tensor::GetValueRows(static_cast<const uint8_t*>(args.v_cache), 0, n_rows, value_shape,
                       value_rows.data());
  const std::vector<float> values = KvAsFloats(value_rows.data(), args.v_dtype, n_rows, kv_stride);
  for (int64_t t = 0; t < args.n_tokens; ++t) {
    const int64_t n_pos = args.first_pos + t + 1;
    for (int64_t h = 0; h < args.n_heads; ++h) {
      const float* q = args.q + (t * args.n_heads + h) * hd;
      const int64_t kv_off = (h / group) * hd;
      std::vector<double> scores(static_cast<size_t>(n_pos));
      for (int64_t p = 0; p < n_pos; ++p) {
        const float* k = keys.data() + p * kv_stride + kv_off;
        double s = 0.0;
        for (int64_t i = 0; i < hd; ++i) s += static_cast<double>(q[i]) * k[i];
        scores[p] = s * args.scale;
      }
      const double max = *std::max_element(scores.begin(), scores.end());
      double denom = 0.0;
      for (double& s : scores) denom += (s = std::exp(s - max));
      float* out = args.out + (t * args.n_heads + h) * hd;
      for (int64_t i = 0; i < hd; ++i) {
        double acc = 0.0;
        for (int64_t p = 0; p < n_pos; ++p)
          acc += scores[p] * values[p * kv_stride + kv_off + i];
        out[i] = static_cast<float>(acc / denom);
      }
    }
  }
}

void SwiGlu(const float* gate, const float* up, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) {
    const double g = gate[i];
    out[i] = static_cast<float>(g / (1.0 + std::exp(-g)) * up[i]);
  }
}

void Softmax(float* x, int64_t n) {
  const double max = *std::max_element(x, x + n);
  std::vector<double> e(static_cast<size_t>(n));
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += (e[i] = std::exp(x[i] - max));
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(e[i] / sum);
}

void TopK(const float* x, int64_t n, int64_t k, int32_t* indices) {
  std::vector<int32_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [x](int32_t a, int32_t b) { return x[a] > x[b]; });
  std::copy(order.begin(), order.begin() + k, indices);
}

float Dot(const float* a, const float* b, int64_t n) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(a[i]) * b[i];
  return static_cast<float>(sum);
}

void Axpy(float a, const float* x, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(y[i] + static_cast<double>(a) * x[i]);
}

}  // namespace ds::kernels::ref
