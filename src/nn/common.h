// Helpers shared by the nn layers' sources.
#pragma once
#include "ember/tensor.h"

namespace ember::nn {
// PyTorch's default init of Linear and Conv: kaiming_uniform_(a = sqrt(5)) for the weight and
// uniform(+-1/sqrt(fan_in)) for the bias (when defined).
void reset_weight_and_bias(Tensor& weight, Tensor& bias);
}  // namespace ember::nn
