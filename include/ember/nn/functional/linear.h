// F::bilinear (F::linear is ember/linalg.h's nn::functional::linear).
#pragma once
#include "ember/tensor.h"

namespace ember::nn::functional {
// x1^T W_k x2 + b_k over the last dims; weight (out, in1, in2).
Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight, const Tensor& bias = Tensor());
}  // namespace ember::nn::functional
