// softmax / log_softmax over one dim of a contiguous tensor viewed as (outer, dim, inner).
// The last-dim case (inner == 1) is vectorized with Highway; 16-bit floats compute in float32.
#pragma once
#include "ember/tensor.h"

namespace ember::kernels {

// x and y contiguous, same dtype and shape (outer, dim, inner).
void softmax_kernel(const Tensor& x, const Tensor& y, bool log);

}  // namespace ember::kernels
