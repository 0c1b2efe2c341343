// Batch-norm folding (PyTorch's torch.nn.utils.fusion: fuse_conv_bn_eval, fuse_linear_bn_eval),
// shared by fx's fuse_conv_bn pass and quantization's fuse_modules.
#pragma once
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/autograd.h"
#include "ember/nn/modules/conv.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/modules/normalization.h"
#include "ember/pointwise.h"
#include "ops/conv_activation.h"

namespace ember::nn::detail {

// A BatchNorm's eval-mode statistics, what folding it takes; false when m is not a BatchNorm{D}d in
// eval mode (any mode when asked: QAT's convert folds a training one's running statistics) with
// running statistics. inv_std = rsqrt(running_var + eps) in the statistics' dtype, as PyTorch's
// fuse_conv_bn_weights; weight and bias undefined when the batch norm has none.
struct BatchNormFold {
  Tensor mean, inv_std, weight, bias;
};
template <size_t D>
bool bn_fold(const Module& m, BatchNormFold& out, bool any_mode = false) {
  const auto* bn = dynamic_cast<const BatchNormImpl<D>*>(&m);
  if (!bn || (bn->is_training() && !any_mode) || !bn->running_mean.defined()) return false;
  out = {bn->running_mean.detach(), rsqrt(bn->running_var.detach() + bn->options.eps()), bn->weight.detach(),
         bn->bias.detach()};
  return true;
}

// The batch norm folded into a layer's weight (output channels along dim 0) and bias (undefined:
// none), in the weight's dtype and PyTorch's order of operations (torch.nn.utils.fusion:
// fuse_conv_bn_weights, or fuse_linear_bn_weights when `linear`), so that the folded weights, and
// the int8 weights quantized from them, are PyTorch's bit for bit. conv: w * (gamma * inv_std),
// (b - mean) * inv_std * gamma + beta; linear: with s = gamma * inv_std, w * s, (b - mean) * s + beta.
std::pair<Tensor, Tensor> fold_batch_norm(const Tensor& weight, const Tensor& bias, const BatchNormFold& bn,
                                          bool linear);

// A copy of a layer (in eval mode, with a bias) with the batch norm folded into it.
template <class Impl, class Options>
std::shared_ptr<Impl> folded(const Impl& layer, Options options, const BatchNormFold& bn) {
  options.bias(true);
  auto out = std::make_shared<Impl>(options);
  out->to(layer.weight.scalar_type());
  auto [w, b] = fold_batch_norm(layer.weight, layer.bias, bn, std::is_same_v<Impl, LinearImpl>);
  NoGradGuard no_grad;
  out->weight.copy_(w);
  out->bias.copy_(b);
  out->train(false);
  return out;
}

// The convolution's own padding as one value per dim, when it has one: zeros padding mode and
// explicit or symmetric ('valid', or 'same' with odd extents) padding; else empty.
template <size_t D>
std::vector<int64_t> symmetric_padding(const ConvNdImpl<D>& conv);

// activation(conv(input)), what the fused convolution modules run (nn::intrinsic's ConvReLU, fx's
// ConvHardswish): one convolution with the activation as its oneDNN post-op when the module's
// padding is one value per dim (zeros padding mode, symmetric) and no fake quantizer acts on its
// weight; else the module's forward and the activation, in place unless a graph records.
template <size_t D>
Tensor conv_activation_forward(ConvNdImpl<D>& conv, const Tensor& input, ember::detail::ConvActivation activation);

}  // namespace ember::nn::detail
