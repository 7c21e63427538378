#include "tensor/cache_rows.h"

#include <cstring>

namespace ds::tensor {

int64_t CacheRowShape::slice_bytes() const { return RowBytes(dtype, head_dim); }

int64_t CacheRowShape::row_bytes() const { return n_kv_heads * slice_bytes(); }

namespace internal {

void PutPlainRows(const uint8_t* rows, int64_t first, int64_t count, const CacheRowShape& shape,
                  uint8_t* cache) {
  if (count > 0) std::memcpy(cache + first * shape.row_bytes(), rows, count * shape.row_bytes());
}

void GetPlainRows(const uint8_t* cache, int64_t first, int64_t count, const CacheRowShape& shape,
                  uint8_t* rows) {
  if (count > 0) std::memcpy(rows, cache + first * shape.row_bytes(), count * shape.row_bytes());
}

void GetPlainSlice(const uint8_t* cache, int64_t p, int64_t h, const CacheRowShape& shape,
                   uint8_t* slice) {
  std::memcpy(slice, cache + p * shape.row_bytes() + h * shape.slice_bytes(),
              shape.slice_bytes());
}

void GatherRows(int64_t first, int64_t count, const CacheRowShape& shape,
                FunctionRef<void(int64_t, int64_t, uint8_t*)> get_slice, uint8_t* rows) {
  for (int64_t i = 0; i < count; ++i) {
    for (int64_t h = 0; h < shape.n_kv_heads; ++h) {
      get_slice(first + i, h, rows + i * shape.row_bytes() + h * shape.slice_bytes());
    }
  }
}

}  // namespace internal
}  // namespace ds::tensor
