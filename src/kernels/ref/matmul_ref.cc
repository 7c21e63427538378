#include <vector>

#include "kernels/ref/ref.h"
#include "tensor/quant.h"

namespace ds::kernels::ref {

void MatMul(const MatrixView& w, const float* x, int64_t n_tokens, float* y) {
  std::vector<float> row(static_cast<size_t>(w.n_cols));
  for (int64_t r = 0; r < w.n_rows; ++r) {
    tensor::DequantizeRow(w.type, w.row(r), row.data(), w.n_cols);
    for (int64_t t = 0; t < n_tokens; ++t) {
      const float* xt = x + t * w.n_cols;
      double sum = 0.0;
      for (int64_t c = 0; c < w.n_cols; ++c) sum += static_cast<double>(row[c]) * xt[c];
      y[t * w.n_rows + r] = static_cast<float>(sum);
    }
  }
}

}  // namespace ds::kernels::ref
