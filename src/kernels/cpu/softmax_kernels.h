// softmax / log_softmax over one dim of a contiguous tensor viewed as (outer, dim, inner).
// The last-dim case (inner == 1) is vectorized with Highway; 16-bit floats compute in float32.
#pragma once
#include "ember/tensor.h"

namespace ember::kernels {

// x and y contiguous, same dtype and shape (outer, dim, inner).
void softmax_kernel(const Tensor& x, const Tensor& y, bool log);
// The gradient of softmax (log = false) or log_softmax from its output y; all contiguous
// (outer, dim, inner) of y's dtype.
void softmax_backward_kernel(const Tensor& grad, const Tensor& y, const Tensor& grad_input, bool log);

}  // namespace ember::kernels
