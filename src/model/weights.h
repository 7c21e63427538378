// Binds GGUF tensors to the views the kernels take, checking each tensor's presence, shape and
// dtype with errors naming the tensor. Small vectors (norm weights, biases) are converted to f32
// and owned here, so model code always reads f32 vectors.
// Thread safety: binding happens at load time; the views are immutable afterwards.
#pragma once

#include <deque>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "gguf/gguf.h"
#include "kernels/kernels.h"

namespace ds::model {

class WeightBinder {
 public:
  explicit WeightBinder(gguf::File& file) : file_(file) {}

  bool Has(const std::string& name) const { return file_.FindTensor(name) != nullptr; }
  const std::string& display_name() const { return file_.display_name(); }

  // A 2-D weight {n_cols, n_rows} in GGUF order (n_rows rows of n_cols elements) that only the
  // matrix kernels read: where the file's bytes are in memory and the active kernels read the
  // dtype faster interleaved (kernels::CanInterleaveRows), its rows are rewritten so, once.
  StatusOr<kernels::MatrixView> Matrix(const std::string& name, int64_t n_cols, int64_t n_rows);
  // A 3-D stack of `n_mats` such matrices {n_cols, n_rows, n_mats}; one view per matrix.
  StatusOr<std::vector<kernels::MatrixView>> MatrixStack(const std::string& name, int64_t n_cols,
                                                         int64_t n_rows, int64_t n_mats);
  // A 3-D stack {n_cols, n_parts * n_rows, n_mats} whose matrices each hold `n_parts` matrices
  // of n_rows rows one after another (fused expert gate and up): views[m * n_parts + part].
  StatusOr<std::vector<kernels::MatrixView>> MatrixStackParts(const std::string& name,
                                                              int64_t n_cols, int64_t n_rows,
                                                              int64_t n_parts, int64_t n_mats);
  // A 2-D weight whose rows are also read one by one (the token embedding, which a tied output
  // multiplies too): always as the file lays them out.
  StatusOr<kernels::MatrixView> RowMatrix(const std::string& name, int64_t n_cols,
                                          int64_t n_rows);
  // A 1-D tensor of n elements converted to f32 (owned by this binder).
  StatusOr<const float*> Vector(const std::string& name, int64_t n);
  // Like Vector, but a 2-D {n_cols, n_rows} tensor flattened row by row.
  StatusOr<const float*> Floats(const std::string& name, std::vector<int64_t> ne);
  // The same 2-D tensor transposed: [n_cols][n_rows], column by column.
  StatusOr<const float*> FloatsByColumn(const std::string& name, int64_t n_cols, int64_t n_rows);

  // The file's tensors that no call above bound, in file order.
  std::vector<std::string> Unbound() const;

 private:
  StatusOr<const gguf::TensorInfo*> Find(const std::string& name, const std::vector<int64_t>& ne);
  StatusOr<std::vector<kernels::MatrixView>> Views(const std::string& name, int64_t n_cols,
                                                   int64_t n_rows, int64_t n_parts,
                                                   int64_t n_mats, const gguf::TensorInfo** info);
  // The views of one tensor's matrices, interleaved where Matrix says.
  void InterleaveWhereFaster(const gguf::TensorInfo& info,
                             std::vector<kernels::MatrixView>& views);

  gguf::File& file_;
  std::deque<std::vector<float>> owned_floats_;
  std::set<std::string, std::less<>> bound_;
};

// Logs one warning naming the tensors no binding took (a layout this build does not know: its
// results may differ from the model's); files with none log nothing.
void WarnUnboundTensors(const WeightBinder& binder);

// dst[0..n_cols) = row `row` of `matrix`, dequantised.
void DequantizeMatrixRow(const kernels::MatrixView& matrix, int64_t row, float* dst);

}  // namespace ds::model
