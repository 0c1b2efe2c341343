// Batch-norm folding (PyTorch's torch.nn.utils.fusion: fuse_conv_bn_eval, fuse_linear_bn_eval),
// shared by fx's fuse_conv_bn pass and quantization's fuse_modules.
#pragma once
#include <memory>
#include <vector>

#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/nn/modules/conv.h"
#include "ember/nn/modules/normalization.h"
#include "ember/pointwise.h"
#include "ember/shape.h"
#include "ops/conv_activation.h"

namespace ember::nn::detail {

// A BatchNorm's eval-mode transform y = x * scale + shift, per channel, in float64; false when m
// is not a BatchNorm{D}d in eval mode (any mode when asked: QAT's convert folds a training one's
// running statistics) with running statistics.
template <size_t D>
bool bn_affine(const Module& m, Tensor& scale, Tensor& shift, bool any_mode = false) {
  const auto* bn = dynamic_cast<const BatchNormImpl<D>*>(&m);
  if (!bn || (bn->is_training() && !any_mode) || !bn->running_mean.defined()) return false;
  const Tensor inv_std = rsqrt(bn->running_var.to(kDouble) + bn->options.eps());
  scale = bn->weight.defined() ? bn->weight.to(kDouble) * inv_std : inv_std;
  shift = (bn->bias.defined() ? bn->bias.to(kDouble) : zeros_like(scale)) - bn->running_mean.to(kDouble) * scale;
  return true;
}

// Folds (scale, shift) into a copy of a layer whose output channels are its weight's dim 0 (in
// eval mode, with a bias).
template <class Impl, class Options>
std::shared_ptr<Impl> folded(const Impl& layer, Options options, const Tensor& scale, const Tensor& shift) {
  options.bias(true);
  auto out = std::make_shared<Impl>(options);
  out->to(layer.weight.scalar_type());
  std::vector<int64_t> shape(static_cast<size_t>(layer.weight.dim()), 1);
  shape[0] = -1;
  const Tensor w = layer.weight.to(kDouble) * scale.reshape(shape);
  const Tensor b = (layer.bias.defined() ? layer.bias.to(kDouble) * scale : zeros_like(scale)) + shift;
  NoGradGuard no_grad;
  out->weight.copy_(w);
  out->bias.copy_(b);
  out->train(false);
  return out;
}

// activation(conv(input)), what the fused convolution modules run (nn::intrinsic's ConvReLU, fx's
// ConvHardswish): one convolution with the activation as its oneDNN post-op when the module's
// padding is one value per dim (zeros padding mode, symmetric) and no fake quantizer acts on its
// weight; else the module's forward and the activation, in place unless a graph records.
template <size_t D>
Tensor conv_activation_forward(ConvNdImpl<D>& conv, const Tensor& input, ember::detail::ConvActivation activation);

}  // namespace ember::nn::detail
