// Double-precision scalar oracle for the Gated DeltaNet kernels of kernels/gated_delta.h: the
// definitions written out literally, one token at a time, for tests to hold the f32 kernels to.
// Thread safety: stateless.
#pragma once

#include <cstdint>

#include "kernels/gated_delta.h"

namespace ds::kernels::ref {

// Same contract as kernels::CausalConv1dSilu with double state and output; out must not alias x.
void CausalConv1dSiluRef(const float* x, int64_t n_tokens, int64_t channels, const float* w,
                         int64_t kernel_size, double* state, double* out);

// The recurrence of GatedDeltaArgs over args' inputs (args.state and args.out are ignored):
//   state [num_v_heads][head_dim_k][head_dim_v] in/out, the same layout as the f32 kernels
//   out   [n_tokens][num_v_heads][head_dim_v]
void GatedDeltaRef(const GatedDeltaArgs& args, double* state, double* out);

}  // namespace ds::kernels::ref
