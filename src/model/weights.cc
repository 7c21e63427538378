#include "model/weights.h"

#include <algorithm>

#include "base/check.h"
#include "base/log.h"
#include "tensor/quant.h"

namespace ds::model {
namespace {

std::string ShapeString(const std::vector<int64_t>& ne) {
  std::string out = "{";
  for (size_t i = 0; i < ne.size(); ++i) out += (i ? ", " : "") + std::to_string(ne[i]);
  return out + "}";
}

}  // namespace

StatusOr<const gguf::TensorInfo*> WeightBinder::Find(const std::string& name,
                                                     const std::vector<int64_t>& ne) {
  const gguf::TensorInfo* info = file_.FindTensor(name);
  if (info == nullptr) {
    return InvalidArgumentError(file_.display_name() + ": missing tensor '" + name + "'");
  }
  if (info->ne != ne) {
    return InvalidArgumentError(file_.display_name() + ": tensor '" + name + "' has shape " +
                                ShapeString(info->ne) + ", expected " + ShapeString(ne));
  }
  bound_.insert(name);
  return info;
}

StatusOr<std::vector<kernels::MatrixView>> WeightBinder::Views(const std::string& name,
                                                               int64_t n_cols, int64_t n_rows,
                                                               int64_t n_parts, int64_t n_mats,
                                                               const gguf::TensorInfo** info) {
  std::vector<int64_t> ne = {n_cols, n_parts * n_rows};
  if (n_mats > 0) ne.push_back(n_mats);
  DS_ASSIGN_OR_RETURN(*info, Find(name, ne));
  const tensor::DType type = (*info)->type;
  if (!tensor::Traits(type).is_weight_type) {
    return InvalidArgumentError(file_.display_name() + ": tensor '" + name + "' has type " +
                                std::string(tensor::DTypeName(type)) +
                                ", which is not supported for weights");
  }
  const int64_t row_bytes = tensor::RowBytes(type, n_cols);
  std::vector<kernels::MatrixView> views;
  for (int64_t m = 0; m < std::max<int64_t>(n_mats, 1) * n_parts; ++m) {
    views.push_back({(*info)->data + m * n_rows * row_bytes, type, n_rows, n_cols, row_bytes});
  }
  return views;
}

void WeightBinder::InterleaveWhereFaster(const gguf::TensorInfo& info,
                                         std::vector<kernels::MatrixView>& views) {
  if (!kernels::CanInterleaveRows(views.front())) return;
  const bool interleaved = file_.RewriteTensorOnce(info, [&](uint8_t* data) {
    for (kernels::MatrixView& view : views) {
      view = kernels::InterleaveRows(view, data + (view.row(0) - info.data));
    }
  });
  // True also when an earlier binding of the file rewrote the bytes (and the lambda did not run).
  if (interleaved) {
    for (kernels::MatrixView& view : views) view.interleaved = true;
  }
}

StatusOr<kernels::MatrixView> WeightBinder::Matrix(const std::string& name, int64_t n_cols,
                                                   int64_t n_rows) {
  const gguf::TensorInfo* info = nullptr;
  DS_ASSIGN_OR_RETURN(std::vector<kernels::MatrixView> views,
                      Views(name, n_cols, n_rows, 1, 0, &info));
  InterleaveWhereFaster(*info, views);
  return views.front();
}

StatusOr<std::vector<kernels::MatrixView>> WeightBinder::MatrixStack(const std::string& name,
                                                                     int64_t n_cols,
                                                                     int64_t n_rows,
                                                                     int64_t n_mats) {
  return MatrixStackParts(name, n_cols, n_rows, 1, n_mats);
}

StatusOr<std::vector<kernels::MatrixView>> WeightBinder::MatrixStackParts(
    const std::string& name, int64_t n_cols, int64_t n_rows, int64_t n_parts, int64_t n_mats) {
  const gguf::TensorInfo* info = nullptr;
  DS_ASSIGN_OR_RETURN(std::vector<kernels::MatrixView> views,
                      Views(name, n_cols, n_rows, n_parts, n_mats, &info));
  InterleaveWhereFaster(*info, views);
  return views;
}

StatusOr<kernels::MatrixView> WeightBinder::RowMatrix(const std::string& name, int64_t n_cols,
                                                      int64_t n_rows) {
  const gguf::TensorInfo* info = nullptr;
  DS_ASSIGN_OR_RETURN(std::vector<kernels::MatrixView> views,
                      Views(name, n_cols, n_rows, 1, 0, &info));
  return views.front();
}

StatusOr<const float*> WeightBinder::Vector(const std::string& name, int64_t n) {
  return Floats(name, {n});
}

StatusOr<const float*> WeightBinder::Floats(const std::string& name, std::vector<int64_t> ne) {
  DS_ASSIGN_OR_RETURN(const gguf::TensorInfo* info, Find(name, ne));
  switch (info->type) {
    case tensor::DType::kF32:
    case tensor::DType::kF16:
    case tensor::DType::kBF16:
      break;
    default:
      return InvalidArgumentError(file_.display_name() + ": tensor '" + name + "' has type " +
                                  std::string(tensor::DTypeName(info->type)) +
                                  ", expected f32, f16 or bf16");
  }
  std::vector<float>& values = owned_floats_.emplace_back(info->num_elements());
  tensor::DequantizeRow(info->type, info->data, values.data(), info->num_elements());
  return values.data();
}

StatusOr<const float*> WeightBinder::FloatsByColumn(const std::string& name, int64_t n_cols,
                                                    int64_t n_rows) {
  DS_RETURN_IF_ERROR(Floats(name, {n_cols, n_rows}).status());
  std::vector<float>& values = owned_floats_.back();  // what Floats just added
  const std::vector<float> by_row = values;
  for (int64_t r = 0; r < n_rows; ++r) {
    for (int64_t c = 0; c < n_cols; ++c) values[c * n_rows + r] = by_row[r * n_cols + c];
  }
  return values.data();
}

std::vector<std::string> WeightBinder::Unbound() const {
  std::vector<std::string> names;
  for (const gguf::TensorInfo& info : file_.tensors()) {
    if (!bound_.contains(info.name)) names.push_back(info.name);
  }
  return names;
}

void WarnUnboundTensors(const WeightBinder& binder) {
  const std::vector<std::string> names = binder.Unbound();
  if (names.empty()) return;
  std::string listed;
  for (size_t i = 0; i < names.size() && i < 8; ++i) listed += (i ? ", " : "") + names[i];
  if (names.size() > 8) listed += ", ...";
  DS_LOG_WARN("{}: {} tensor(s) not used by this architecture: {}", binder.display_name(),
              names.size(), listed);
}

void DequantizeMatrixRow(const kernels::MatrixView& matrix, int64_t row, float* dst) {
  DS_CHECK_MSG(!matrix.interleaved, "a row of an interleaved matrix is not stored as one");
  tensor::DequantizeRow(matrix.type, matrix.row(row), dst, matrix.n_cols);
}

}  // namespace ds::model
