// A convolution and the activation of its result (PyTorch 2's mkldnn _convolution_pointwise with
// attr "relu" or "hardswish"), what fx's fused convolution modules run: with no graph to record or
// trace, one convolution op with the activation as oneDNN's post-op, so the result is written
// once; otherwise conv1d/2d/3d and the activation, recorded (or traced) one after the other.
#pragma once
#include <cstdint>
#include <optional>

#include "ember/tensor.h"

namespace ember::detail {

enum class ConvActivation { kReLU, kHardswish };

// The dimension comes from the weight's; errors name convolution_relu or convolution_hardswish.
Tensor convolution_activation(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                              IntArrayRef padding, IntArrayRef dilation, int64_t groups, ConvActivation activation);

// activation(conv2d(input, weight, bias, ...) + other), what fx's residual blocks run where nothing
// reads `other` afterwards: written into other when the sum has other's size and dtype (one oneDNN
// convolution reading other's values as it writes, its sum post-op, when other also has the
// result's layout; else conv2d, add_ and the activation in place), else a new tensor. Autocast
// casts as conv2d's. It records no gradient and cannot be traced.
Tensor convolution_add_activation(const Tensor& other, const Tensor& input, const Tensor& weight, const Tensor& bias,
                                  IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups,
                                  std::optional<ConvActivation> activation);

// oneDNN's channel-blocked layout (nChw16c; nChw8c below AVX-512) held in an ordinary float32 tensor
// of sizes (N, ceil(C / b), H, W, b), b = channel_block(), its channels past C zeros: what fx's
// optimize_for_inference keeps between consecutive convolutions so that no reorder runs between
// them (PyTorch's keeps mkldnn tensors). Such a tensor never leaves a GraphModule.
int64_t channel_block();

// A 2-D float32 convolution reading `input` channel-blocked or in its own layout, with the activation
// as oneDNN's post-op, writing its result channel-blocked or in `plain_format`. It records no
// gradient and cannot be traced.
Tensor convolution_blocked(const Tensor& input, bool blocked_input, const Tensor& weight, const Tensor& bias,
                           IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups,
                           std::optional<ConvActivation> activation, bool blocked_output, MemoryFormat plain_format);

// The (N, channels, H, W) tensor in `format` of a channel-blocked one.
Tensor from_channel_blocked(const Tensor& blocked, int64_t channels, MemoryFormat format);

}  // namespace ember::detail
