// Pointwise kernels. Each takes a built TensorIterator (output first, then inputs, all in the
// common dtype unless noted) and the op to apply. Float dtypes run vectorized with Highway
// (Half/BFloat16 computed in float32); integer and bool dtypes run plain loops.
#pragma once
#include "core/tensor_iterator.h"

namespace ember::kernels {

enum class BinaryOp : uint8_t {
  Add,  // a + alpha * b
  Sub,  // a - alpha * b
  Mul,
  Div,
};

void binary_kernel(TensorIterator& iter, BinaryOp op, const Scalar& alpha = 1);

}  // namespace ember::kernels
