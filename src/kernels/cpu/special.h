// Vectorized kernels of special functions (special_kernels.cpp). Each takes a built
// TensorIterator (out, x) of a float dtype (Half/BFloat16 computed in float32).
#pragma once
#include <cstdint>

#include "core/tensor_iterator.h"

namespace ember::kernels {

enum class SpecialOp : uint8_t {
  Lgamma,  // log|Gamma(x)|
  I0,      // the modified Bessel functions of the first kind, I_0 and I_1,
  I1,
  I0e,     // and their scaled forms e^-|x| I_0(x), e^-|x| I_1(x)
  I1e,
};
void special_kernel(TensorIterator& iter, SpecialOp op);

}  // namespace ember::kernels
