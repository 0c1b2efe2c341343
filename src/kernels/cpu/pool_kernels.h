// Pooling loops over (planes, H, W) contiguous tensors, for every float dtype (the 16-bit forwards
// accumulate in float32, the backwards in the gradient's dtype as PyTorch's do), with PyTorch's
// window rules described per output row/column.
#pragma once
#include <vector>

#include "ember/array_ref.h"
#include "ember/tensor.h"

namespace ember::kernels {

// The input positions output index o of one axis reads: begin, begin + step, ... < end.
// `extent` is the window size avg pooling divides by when padding counts.
struct PoolAxis {
  SmallVector<int64_t, 16> begin, end, extent;  // (heap memory only past 16 outputs: small pools are per-op overhead)
  int64_t step = 1;
};

// The output columns [lo, hi) whose windows are whole and start `stride` apart (the ones max
// pooling runs a vector at a time).
struct MaxColumns {
  int64_t lo = 0, hi = 0, stride = 1;
};

// in (P, H, W) -> out (P, oH, oW); indices (P, oH, oW) int64 (flat h * W + w) or undefined.
// The maximum propagates NaN; an empty window gives -inf and the index of its first position.
void max_pool_kernel(const Tensor& in, const Tensor& out, const Tensor& indices, const PoolAxis& h,
                     const PoolAxis& w);
// Sum of the window divided by divisor_override, or by extent_h * extent_w when count_extent,
// or by the number of positions read. An empty window gives 0.
void avg_pool_kernel(const Tensor& in, const Tensor& out, const PoolAxis& h, const PoolAxis& w, bool count_extent,
                     int64_t divisor_override);

// channels_last max pooling: in (N, H, W, C) -> out and indices (N, oH, oW, C), with the plane
// kernel's windows, values and indices (flat h * W + w).
void max_pool_cl_kernel(const Tensor& in, const Tensor& out, const Tensor& indices, const PoolAxis& h,
                        const PoolAxis& w);
// Its backward: grad_out, indices (N, oH, oW, C) -> grad_in (N, H, W, C), overwritten.
void max_pool_backward_cl_kernel(const Tensor& grad_out, const Tensor& indices, const Tensor& grad_in);
// channels_last avg pooling and its backward, (N, H, W, C) <-> (N, oH, oW, C), with the plane
// kernels' windows, divisors and results.
void avg_pool_cl_kernel(const Tensor& in, const Tensor& out, const PoolAxis& h, const PoolAxis& w, bool count_extent,
                        int64_t divisor_override);
void avg_pool_backward_cl_kernel(const Tensor& grad_out, const Tensor& grad_in, const PoolAxis& h, const PoolAxis& w,
                                 bool count_extent, int64_t divisor_override);

// Backward: grad_out (P, oH, oW) -> grad_in (P, H, W), overwritten. Max pooling adds each output's
// gradient at its index; avg pooling spreads it over the window with the forward's divisor.
void max_pool_backward_kernel(const Tensor& grad_out, const Tensor& indices, const Tensor& grad_in);
void avg_pool_backward_kernel(const Tensor& grad_out, const Tensor& grad_in, const PoolAxis& h, const PoolAxis& w,
                              bool count_extent, int64_t divisor_override);

}  // namespace ember::kernels
