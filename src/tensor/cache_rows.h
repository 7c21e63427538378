// What K and V caches share (tensor/key_tiles.h, tensor/value_spans.h): a position's row holds
// n_kv_heads slices of head_dim elements of one dtype, and a cache not laid out otherwise holds
// the rows one after another. Rows leave a cache laid out otherwise slice by slice.
// Nothing here is inline: the kernel tables, compiled with their own instruction sets, include
// this header (see kernels/x86/table_unit.inc).
#pragma once

#include <cstdint>

#include "base/function_ref.h"
#include "tensor/dtype.h"

namespace ds::tensor {

struct CacheRowShape {
  DType dtype = DType::kF32;
  int64_t n_kv_heads = 1;
  int64_t head_dim = 0;

  int64_t slice_bytes() const;  // of one head of one position
  int64_t row_bytes() const;    // of one position, every head
};

namespace internal {

// Rows [first, first + count) of a cache of rows: in, out, and head h's slice of position p.
void PutPlainRows(const uint8_t* rows, int64_t first, int64_t count, const CacheRowShape& shape,
                  uint8_t* cache);
void GetPlainRows(const uint8_t* cache, int64_t first, int64_t count, const CacheRowShape& shape,
                  uint8_t* rows);
void GetPlainSlice(const uint8_t* cache, int64_t p, int64_t h, const CacheRowShape& shape,
                   uint8_t* slice);

// Rows [first, first + count) of a cache laid out otherwise, each head's slice from
// get_slice(p, h, slice).
void GatherRows(int64_t first, int64_t count, const CacheRowShape& shape,
                FunctionRef<void(int64_t, int64_t, uint8_t*)> get_slice, uint8_t* rows);

}  // namespace internal
}  // namespace ds::tensor
