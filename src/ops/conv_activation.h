// A convolution and the activation of its result (PyTorch 2's mkldnn _convolution_pointwise with
// attr "relu" or "hardswish"), what fx's fused convolution modules run: with no graph to record or
// trace, one convolution op with the activation as oneDNN's post-op, so the result is written
// once; otherwise conv1d/2d/3d and the activation, recorded (or traced) one after the other.
#pragma once
#include <cstdint>

#include "ember/tensor.h"

namespace ember::detail {

enum class ConvActivation { kReLU, kHardswish };

// The dimension comes from the weight's; errors name convolution_relu or convolution_hardswish.
Tensor convolution_activation(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                              IntArrayRef padding, IntArrayRef dilation, int64_t groups, ConvActivation activation);

}  // namespace ember::detail
